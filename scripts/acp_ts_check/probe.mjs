import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
const COMMAND = JSON.parse(process.env.FORGE_ACP_COMMAND);
const WORKSPACE = process.env.FORGE_ACP_WORKSPACE;
const child = spawn(COMMAND[0], COMMAND.slice(1), { cwd: WORKSPACE, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const w = stream.writable.getWriter();
const tapped = { readable: stream.readable.pipeThrough(new TransformStream({ transform(m, c) { console.log("IN ", JSON.stringify(m).slice(0, 300)); c.enqueue(m); } })),
  writable: new WritableStream({ write(m) { console.log("OUT", JSON.stringify(m).slice(0, 300)); return w.write(m); }, close: () => w.close() }) };
const conn = acp.client({ name: "probe" }).onNotification(acp.methods.client.session.update, () => {}).connect(tapped);
const a = conn.agent;
const init = await a.request("initialize", { protocolVersion: 2, clientCapabilities: {} });
const s = await a.request("session/new", { cwd: WORKSPACE, mcpServers: [] });
const ac = new AbortController();
const p = a.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "long" }] }, { cancellationSignal: ac.signal });
setTimeout(() => ac.abort(), 1500);
const t = setTimeout(() => { console.log("NO ANSWER to the prompt 8s after $/cancel_request"); process.exit(0); }, 9500);
try { console.log("prompt ->", JSON.stringify(await p)); } catch (e) { console.log("prompt rejected", e.code, e.message); }
clearTimeout(t);
child.stdin.end();
await new Promise((r) => child.on("exit", r));
conn.close();
