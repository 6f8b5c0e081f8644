// `forge acp` judged by the official TypeScript ACP SDK's client side.
//
// Started by run_check.py, which owns the loopback model server (scripted for this scenario),
// the isolated XDG directories and the workspace; this file is the editor. It spawns the
// Forge command it is given (FORGE_ACP_COMMAND, a JSON list) three times:
//   1. initialize, session/new, turn 1 (the model writes hello.txt: the permission request is
//      answered "allow once"), turn 2 (the model reads it back and answers), turn 3 cancelled
//      with session/cancel after the first streamed chunk,
//      and turn 4 aborted through the SDK's own request cancellation ($/cancel_request);
//   2. a new process: initialize, session/load of the same session (its history replayed),
//      session/list, set_mode, set_config_option, a "/cost" command, an unknown session, and a
//      second session: a plan and a command, a cancel while asking, a failed turn;
//   3. a new process driven through the SDK's session helpers (buildSession, nextUpdate).
// Every message Forge sends is also checked against the SDK's own v1 schema validators
// (requests' responses included, which the SDK's client does not validate itself), and the
// order of updates and responses is checked on the wire. Prints a PASS/FAIL table; exit
// status 1 when a row failed.

import { spawn } from "node:child_process";
import { existsSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";
// The SDK's generated zod validators for the stable v1 schema (not in its exports map).
import * as v1 from "./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js";

const SDK_VERSION = JSON.parse(
  readFileSync(new URL("./node_modules/@agentclientprotocol/sdk/package.json", import.meta.url)),
).version;
const COMMAND = JSON.parse(process.env.FORGE_ACP_COMMAND);
const WORKSPACE = process.env.FORGE_ACP_WORKSPACE;
// Forge's stderr: appended to this file (run_check.py shows its end on a failure), else ours.
const STDERR_LOG = process.env.FORGE_ACP_STDERR;
const TURN_1 = "Create hello.txt saying hello from forge";
const TURN_2 = "What does hello.txt say?";
const TURN_3 = "Tell me a long story";
const TURN_4 = "Tell me another long story";
const HELPER_PROMPT = "Say hello";
const FIRST_ANSWER = "Created hello.txt for you.";
const SECOND_ANSWER = "The file says: hello from forge";
const STEP_TIMEOUT_MS = 60_000;

const RESPONSE_SCHEMAS = {
  initialize: v1.zInitializeResponse,
  "session/new": v1.zNewSessionResponse,
  "session/load": v1.zLoadSessionResponse,
  "session/prompt": v1.zPromptResponse,
  "session/list": v1.zListSessionsResponse,
  "session/set_mode": v1.zSetSessionModeResponse,
  "session/set_config_option": v1.zSetSessionConfigOptionResponse,
};
const INCOMING_SCHEMAS = {
  "session/update": v1.zSessionNotification,
  "session/request_permission": v1.zRequestPermissionRequest,
};

// The JSON schema the SDK ships (its zod validators are lenient: an invalid optional field or
// content item is dropped, not reported), so each message is also held to the schema itself.
const JSON_SCHEMA = JSON.parse(
  readFileSync(new URL("./node_modules/@agentclientprotocol/sdk/schema/v1/schema.json", import.meta.url)),
);
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(JSON_SCHEMA, "acp");
const SCHEMA_NAMES = {
  initialize: "InitializeResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/prompt": "PromptResponse",
  "session/list": "ListSessionsResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse",
  error: "Error",
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
};
function jsonSchemaFaults(key, value) {
  const validator = ajv.getSchema(`acp#/$defs/${SCHEMA_NAMES[key]}`);
  if (validator(value)) return "";
  return ajv.errorsText(validator.errors.slice(0, 4), { dataVar: "" });
}

const rows = [];
function check(name, ok, detail = "") {
  rows.push({ name, ok: Boolean(ok), detail: ok ? "" : detail });
  return Boolean(ok);
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), STEP_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function issues(result) {
  return result.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
}

/** One `forge acp` process and the SDK client connected to it, with the wire recorded. */
class ForgeProcess {
  constructor(label) {
    this.label = label;
    this.wire = []; // {direction: "in" | "out", message}, in order
    this.methodsById = new Map();
    this.schemaFaults = [];
    this.updates = []; // the session/update params the SDK handed to the client, in order
    this.permissions = []; // the session/request_permission params, in order
    this.fileRequests = [];
    this.onUpdate = null;
    this.answerPermission = null; // (params) => outcome; default: allow once
    this.child = spawn(COMMAND[0], COMMAND.slice(1), {
      cwd: WORKSPACE,
      env: process.env,
      stdio: ["pipe", "pipe", STDERR_LOG ? openSync(STDERR_LOG, "a") : "inherit"],
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
    const stream = acp.ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout));
    const writer = stream.writable.getWriter();
    const tapped = {
      readable: stream.readable.pipeThrough(
        new TransformStream({
          transform: (message, controller) => {
            this.record("in", message);
            controller.enqueue(message);
          },
        }),
      ),
      writable: new WritableStream({
        write: (message) => {
          this.record("out", message);
          return writer.write(message);
        },
        close: () => writer.close(),
        abort: (reason) => writer.abort(reason),
      }),
    };
    const app = acp
      .client({ name: "forge-acp-ts-check" })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        this.permissions.push(params);
        if (this.answerPermission) return this.answerPermission(params);
        const once = params.options.find((option) => option.kind === "allow_once");
        return { outcome: { outcome: "selected", optionId: once.optionId } };
      })
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        this.fileRequests.push(`read ${params.path}`);
        throw acp.RequestError.internalError({}, "this editor serves no files");
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        this.fileRequests.push(`write ${params.path}`);
        return {};
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
        if (this.onUpdate) this.onUpdate(params.update);
      });
    this.connection = app.connect(tapped);
    this.agent = this.connection.agent;
  }

  record(direction, message) {
    this.wire.push({ direction, message });
    if (direction === "out") {
      if ("method" in message && "id" in message) this.methodsById.set(message.id, message.method);
      return;
    }
    if (message.jsonrpc !== "2.0") {
      this.schemaFaults.push(`${this.label}: a message without jsonrpc "2.0"`);
    }
    let schema;
    let what;
    if ("method" in message) {
      schema = INCOMING_SCHEMAS[message.method];
      what = message.method;
      if (!schema && message.method.startsWith("_") && !("id" in message)) {
        // An extension notification (ACP reserves names starting with "_" for them): Forge's
        // `_forge/attention`; its params must be an object.
        if (typeof message.params !== "object" || message.params === null) {
          this.schemaFaults.push(`${this.label}: ${message.method} without an object of params`);
        }
        return;
      }
      if (!schema) {
        this.schemaFaults.push(`${this.label}: unexpected method ${message.method}`);
        return;
      }
      const result = schema.safeParse(message.params);
      if (!result.success) this.schemaFaults.push(`${this.label} ${what} (zod): ${issues(result)}`);
      const faults = jsonSchemaFaults(message.method, message.params);
      if (faults) this.schemaFaults.push(`${this.label} ${what} (JSON schema): ${faults}`);
      return;
    }
    const method = this.methodsById.get(message.id);
    what = `response to ${method}`;
    if ("error" in message) {
      const faults = jsonSchemaFaults("error", message.error);
      if (faults) this.schemaFaults.push(`${this.label} error ${what} (JSON schema): ${faults}`);
      return;
    }
    schema = RESPONSE_SCHEMAS[method];
    if (!schema) return;
    const result = schema.safeParse(message.result);
    if (!result.success) this.schemaFaults.push(`${this.label} ${what} (zod): ${issues(result)}`);
    const faults = jsonSchemaFaults(method, message.result);
    if (faults) this.schemaFaults.push(`${this.label} ${what} (JSON schema): ${faults}`);
  }

  request(method, params, options) {
    return withTimeout(this.agent.request(method, params, options), `${this.label} ${method}`);
  }

  /** The wire index of the response to the last request of `method` sent so far. */
  responseIndex(method) {
    let id;
    for (const { direction, message } of this.wire) {
      if (direction === "out" && message.method === method && "id" in message) id = message.id;
    }
    return this.wire.findIndex(
      ({ direction, message }) => direction === "in" && !("method" in message) && message.id === id,
    );
  }

  async close() {
    this.child.stdin.end();
    const code = await withTimeout(this.exited, `${this.label} exit after stdin closed`);
    this.connection.close();
    return code;
  }
}

function textOf(updates, kind) {
  return updates
    .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");
}

async function initialize(forge) {
  const init = await forge.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "forge-acp-ts-check", version: SDK_VERSION },
  });
  check(
    `${forge.label}: initialize (protocol ${acp.PROTOCOL_VERSION}, loadSession)`,
    init.protocolVersion === acp.PROTOCOL_VERSION && init.agentCapabilities?.loadSession === true,
    JSON.stringify(init).slice(0, 300),
  );
  return init;
}

/** Sends a prompt and returns its response and the updates that arrived during it. */
async function prompt(forge, sessionId, text, during, options) {
  const start = forge.updates.length;
  forge.onUpdate = during ?? null;
  const response = await forge.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text }],
  }, options);
  forge.onUpdate = null;
  return { response, updates: forge.updates.slice(start).map((n) => n.update) };
}

/** Checks one turn's tool card: tool_call pending, then updates ending in `final`. */
function checkToolCard(label, updates, kind, final) {
  const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
  check(`${label}: one tool_call, kind ${kind}`, calls.length === 1 && calls[0].kind === kind,
    JSON.stringify(calls).slice(0, 300));
  if (calls.length !== 1) return null;
  const call = calls[0];
  const id = call.toolCallId;
  check(`${label}: tool_call status pending, with title and rawInput`,
    call.status === "pending" && call.title && call.rawInput !== undefined,
    JSON.stringify(call).slice(0, 300));
  const locations = call.locations ?? [];
  check(`${label}: tool_call locations are absolute paths`,
    locations.length > 0 && locations.every((l) => isAbsolute(l.path)), JSON.stringify(locations));
  const callIndex = updates.indexOf(call);
  const ownUpdates = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id);
  const statuses = ownUpdates.map((u) => u.status).filter(Boolean);
  check(`${label}: tool_call_update statuses in_progress → ${final}`,
    statuses.length >= 2 && statuses[0] === "in_progress" && statuses.at(-1) === final &&
      statuses.slice(0, -1).every((s) => s === "in_progress"),
    `statuses: ${JSON.stringify(statuses)}`);
  check(`${label}: every tool_call_update after its tool_call`,
    ownUpdates.every((u) => updates.indexOf(u) > callIndex), "an update came before the call");
  const stray = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId !== id);
  check(`${label}: no tool_call_update for an unknown call`, stray.length === 0, JSON.stringify(stray).slice(0, 300));
  return { call, ownUpdates };
}

async function firstProcess() {
  const forge = new ForgeProcess("process 1");
  try {
    await initialize(forge);
    const session = await forge.request(acp.methods.agent.session.new, { cwd: WORKSPACE, mcpServers: [] });
    const sessionId = session.sessionId;
    check("process 1: session/new answers a session id and the modes",
      typeof sessionId === "string" && session.modes?.availableModes?.length > 0,
      JSON.stringify(session).slice(0, 300));

    // Turn 1: the write, asked and allowed once.
    const one = await prompt(forge, sessionId, TURN_1);
    check("turn 1: stop reason end_turn", one.response.stopReason === "end_turn", JSON.stringify(one.response));
    check("turn 1: one permission request, allow_once offered",
      forge.permissions.length === 1 &&
        forge.permissions[0].options.some((o) => o.kind === "allow_once"),
      JSON.stringify(forge.permissions).slice(0, 300));
    const card = checkToolCard("turn 1", one.updates, "edit", "completed");
    if (card && forge.permissions.length === 1) {
      check("turn 1: the permission request names the announced tool call",
        forge.permissions[0].toolCall.toolCallId === card.call.toolCallId,
        `${forge.permissions[0].toolCall.toolCallId} vs ${card.call.toolCallId}`);
    }
    if (card) {
      const diffs = card.ownUpdates.flatMap((u) => u.content ?? []).filter((c) => c.type === "diff");
      check("turn 1: the completed card carries a diff of hello.txt (absolute path, new text)",
        diffs.length > 0 && diffs.every((d) => isAbsolute(d.path)) &&
          diffs.some((d) => d.path.endsWith("hello.txt") && d.newText.includes("hello from forge")),
        JSON.stringify(diffs).slice(0, 300));
    }
    check("turn 1: the answer streamed as agent_message_chunk",
      textOf(one.updates, "agent_message_chunk") === FIRST_ANSWER,
      JSON.stringify(textOf(one.updates, "agent_message_chunk")));
    let written = "";
    try {
      written = readFileSync(`${WORKSPACE}/hello.txt`, "utf8");
    } catch {}
    check("turn 1: hello.txt written on disk", written === "hello from forge\n", JSON.stringify(written));

    // Turn 2: the read, no question.
    const asked = forge.permissions.length;
    const two = await prompt(forge, sessionId, TURN_2);
    check("turn 2: stop reason end_turn", two.response.stopReason === "end_turn", JSON.stringify(two.response));
    check("turn 2: no permission request for a read", forge.permissions.length === asked,
      `${forge.permissions.length - asked} asked`);
    const readCard = checkToolCard("turn 2", two.updates, "read", "completed");
    if (readCard) {
      const texts = readCard.ownUpdates.flatMap((u) => u.content ?? [])
        .filter((c) => c.type === "content" && c.content?.type === "text").map((c) => c.content.text);
      check("turn 2: the read's result shows the file's text",
        texts.some((t) => t.includes("hello from forge")), JSON.stringify(texts).slice(0, 300));
    }
    check("turn 2: the answer streamed as agent_message_chunk",
      textOf(two.updates, "agent_message_chunk") === SECOND_ANSWER,
      JSON.stringify(textOf(two.updates, "agent_message_chunk")));

    // Turn 3: cancelled mid-stream.
    let cancelled = false;
    const three = await prompt(forge, sessionId, TURN_3, (update) => {
      if (!cancelled && update.sessionUpdate === "agent_message_chunk") {
        cancelled = true;
        void forge.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      }
    });
    check("turn 3: a chunk streamed, then session/cancel sent", cancelled, "no message chunk came");
    check("turn 3: stop reason cancelled", three.response.stopReason === "cancelled", JSON.stringify(three.response));
    const streamed = textOf(three.updates, "agent_message_chunk");
    check("turn 3: only part of the long answer streamed", streamed.length > 0 && streamed.length < 2000,
      `${streamed.length} characters`);

    // Turn 4: the SDK's own request cancellation ($/cancel_request, sent when a caller aborts
    // a request), waiting for Forge's answer to the cancelled prompt.
    const abort = new AbortController();
    let aborted = false;
    const four = await prompt(forge, sessionId, TURN_4, (update) => {
      if (!aborted && update.sessionUpdate === "agent_message_chunk") {
        aborted = true;
        abort.abort();
      }
    }, { cancellationSignal: abort.signal });
    const cancelRequests = forge.wire.filter(
      ({ direction, message }) => direction === "out" && message.method === "$/cancel_request");
    check("turn 4: a chunk streamed, then the SDK sent $/cancel_request", aborted && cancelRequests.length === 1,
      `aborted ${aborted}, ${cancelRequests.length} $/cancel_request sent`);
    check("turn 4: the aborted prompt answers, stop reason cancelled", four.response.stopReason === "cancelled",
      JSON.stringify(four.response));

    // Updates of a turn come before its prompt's response (ACP: all updates, then the answer).
    const late = [];
    forge.wire.forEach(({ direction, message }, index) => {
      if (direction !== "in" || message.method !== "session/update") return;
      const previous = forge.wire.slice(0, index).reverse().find(
        (e) => (e.direction === "out" && "method" in e.message && "id" in e.message) ||
          (e.direction === "in" && !("method" in e.message)),
      );
      if (previous && previous.direction === "in" && forge.methodsById.get(previous.message.id) === "session/prompt") {
        late.push(message.params.update.sessionUpdate);
      }
    });
    check("process 1: no session/update after its prompt's response", late.length === 0,
      `after a response: ${JSON.stringify(late)}`);
    check("process 1: no fs/* request (Forge uses the disk)", forge.fileRequests.length === 0,
      JSON.stringify(forge.fileRequests));
    const code = await forge.close();
    check("process 1: exits 0 when stdin closes", code === 0, `exit status ${code}`);
    return { sessionId, forge };
  } catch (error) {
    check("process 1: the scenario ran to its end", false, String(error?.stack ?? error).slice(0, 500));
    forge.child.kill("SIGTERM");
    return { sessionId: null, forge };
  }
}

async function secondProcess(sessionId) {
  const forge = new ForgeProcess("process 2");
  try {
    await initialize(forge);
    const loaded = await forge.request(acp.methods.agent.session.load, {
      sessionId,
      cwd: WORKSPACE,
      mcpServers: [],
    });
    check("process 2: session/load answers with the modes", loaded?.modes?.availableModes?.length > 0,
      JSON.stringify(loaded).slice(0, 300));
    const responseAt = forge.responseIndex("session/load");
    const replayed = forge.wire
      .slice(0, responseAt)
      .filter(({ direction, message }) => direction === "in" && message.method === "session/update")
      .map(({ message }) => message.params.update);
    const kinds = replayed.map((u) => u.sessionUpdate).filter((k) => k !== "available_commands_update");
    const users = replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
    check("replay: the four user prompts, in order, before the load response",
      JSON.stringify(users) === JSON.stringify([TURN_1, TURN_2, TURN_3, TURN_4]), JSON.stringify(users));
    const answers = textOf(replayed, "agent_message_chunk");
    check("replay: both answers and the cut-off partial answer",
      answers.includes(FIRST_ANSWER) && answers.includes(SECOND_ANSWER) && answers.includes("word"),
      JSON.stringify(answers).slice(0, 300));
    const calls = replayed.filter((u) => u.sessionUpdate === "tool_call");
    const ends = replayed.filter((u) => u.sessionUpdate === "tool_call_update");
    check("replay: the edit and the read as tool_call + a completed tool_call_update",
      calls.map((c) => c.kind).join() === "edit,read" &&
        calls.every((c) => ends.some((e) => e.toolCallId === c.toolCallId && e.status === "completed")),
      JSON.stringify({ calls: calls.map((c) => [c.kind, c.toolCallId]), ends: ends.map((e) => [e.toolCallId, e.status]) }));
    const order = kinds.join(" ");
    check("replay: in conversation order",
      kinds.indexOf("user_message_chunk") === 0 &&
        kinds.indexOf("tool_call") < kinds.lastIndexOf("user_message_chunk"),
      order);

    // The session's other verbs, each answer held to the schema.
    const listed = await forge.request(acp.methods.agent.session.list, { cwd: WORKSPACE });
    check("process 2: session/list lists the session",
      listed.sessions?.some((s) => s.sessionId === sessionId && s.cwd === WORKSPACE),
      JSON.stringify(listed).slice(0, 300));
    await forge.request(acp.methods.agent.session.setMode, { sessionId, modeId: "accept-edits" });
    const model = loaded.configOptions?.find((o) => o.id === "model");
    const set = await forge.request(acp.methods.agent.session.setConfigOption, {
      sessionId, configId: "model", value: model?.currentValue ?? "",
    });
    check("process 2: set_mode and set_config_option answer (the options back)",
      Array.isArray(set.configOptions), JSON.stringify(set).slice(0, 300));
    const cost = await prompt(forge, sessionId, "/cost");
    check("process 2: the /cost command answers with a message, end_turn",
      cost.response.stopReason === "end_turn" && textOf(cost.updates, "agent_message_chunk").length > 0,
      JSON.stringify(cost.response));
    let unknownError = null;
    try {
      await forge.request(acp.methods.agent.session.prompt, {
        sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }],
      });
    } catch (error) {
      unknownError = error;
    }
    check("process 2: a prompt to an unknown session is refused with -32002",
      unknownError?.code === -32002, String(unknownError?.message ?? "answered"));
    await otherSession(forge);
    const code = await forge.close();
    check("process 2: exits 0 when stdin closes", code === 0, `exit status ${code}`);
  } catch (error) {
    check("process 2: the scenario ran to its end", false, String(error?.stack ?? error).slice(0, 500));
    forge.child.kill("SIGTERM");
  }
  return forge;
}

/** A second session in process 2: a plan and a command, a cancel while a permission request
 * is pending (answered "cancelled", as ACP asks of a client that cancels), a failed turn. */
async function otherSession(forge) {
  const session = await forge.request(acp.methods.agent.session.new, { cwd: WORKSPACE, mcpServers: [] });
  const sessionId = session.sessionId;
  const asked = forge.permissions.length;
  const planned = await prompt(forge, sessionId, "Plan it, then run a command");
  check("session B: plan + command turn, end_turn", planned.response.stopReason === "end_turn",
    JSON.stringify(planned.response));
  const plans = planned.updates.filter((u) => u.sessionUpdate === "plan");
  check("session B: update_plan sent as a plan (3 entries, statuses mapped)",
    plans.length === 1 && plans[0].entries.map((e) => e.status).join() === "completed,in_progress,pending",
    JSON.stringify(plans).slice(0, 300));
  const commands = planned.updates.filter((u) => u.sessionUpdate === "tool_call" && u.kind === "execute");
  const commandEnd = commands.length === 1 && planned.updates.filter(
    (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === commands[0].toolCallId && u.status).at(-1);
  check("session B: the command asked once, its card execute → completed",
    forge.permissions.length === asked + 1 && commandEnd?.status === "completed",
    JSON.stringify({ asked: forge.permissions.length - asked, commands, commandEnd }).slice(0, 300));
  const outputs = planned.updates.filter((u) => u.sessionUpdate === "tool_call_update" &&
    u.toolCallId === commands[0]?.toolCallId && JSON.stringify(u.content ?? []).includes("second line"));
  check("session B: the command's output in its card", outputs.length > 0, "no output shown");

  forge.answerPermission = () => {
    void forge.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    return { outcome: { outcome: "cancelled" } };
  };
  const withdrawn = await prompt(forge, sessionId, "Write two files");
  forge.answerPermission = null;
  check("session B: cancel while asking → stop reason cancelled", withdrawn.response.stopReason === "cancelled",
    JSON.stringify(withdrawn.response));
  const writes = withdrawn.updates.filter((u) => u.sessionUpdate === "tool_call");
  const finals = writes.map((w) => withdrawn.updates.filter(
    (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === w.toolCallId && u.status).at(-1)?.status);
  check("session B: both announced writes end failed, no file written",
    writes.length === 2 && finals.every((f) => f === "failed") &&
      !existsSync(`${WORKSPACE}/one.txt`) && !existsSync(`${WORKSPACE}/two.txt`),
    JSON.stringify(finals));

  let failure = null;
  try {
    await prompt(forge, sessionId, "This one fails");
  } catch (error) {
    failure = error;
  }
  check("session B: a server error fails the prompt with -32603", failure?.code === -32603,
    String(failure?.message ?? "answered"));
  const after = await prompt(forge, sessionId, "Try again");
  check("session B: the session goes on after the error", after.response.stopReason === "end_turn" &&
    textOf(after.updates, "agent_message_chunk") === "Recovered.", JSON.stringify(after.response));
}

/** Process 3: the SDK's own session helpers (`connectWith`, `buildSession(...).withSession`,
 * `prompt`, `nextUpdate`, `readText`), the way a TypeScript editor is written against it. */
async function helperProcess() {
  const child = spawn(COMMAND[0], COMMAND.slice(1), {
    cwd: WORKSPACE,
    env: process.env,
    stdio: ["pipe", "pipe", STDERR_LOG ? openSync(STDERR_LOG, "a") : "inherit"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  try {
    const seen = await withTimeout(acp.client({ name: "forge-acp-ts-check" }).connectWith(stream, async (ctx) => {
      await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
      return ctx.buildSession(WORKSPACE).withSession(async (session) => {
        const response = await session.prompt(HELPER_PROMPT);
        const kinds = [];
        for (;;) {
          const message = await session.nextUpdate();
          kinds.push(message.kind === "stop" ? `stop:${message.stopReason}` : message.update.sessionUpdate);
          if (message.kind === "stop") break;
        }
        return { response, kinds };
      });
    }), "process 3 (the SDK's session helpers)");
    check("process 3: the SDK's session helpers see the commands, the answer and end_turn",
      seen.response.stopReason === "end_turn" && seen.kinds.includes("available_commands_update") &&
        seen.kinds.includes("agent_message_chunk") && seen.kinds.at(-1) === "stop:end_turn",
      JSON.stringify(seen.kinds));
  } catch (error) {
    check("process 3: the SDK's session helpers ran to the end", false, String(error?.stack ?? error).slice(0, 500));
  }
  child.stdin.end();
  const code = await withTimeout(exited, "process 3 exit after stdin closed");
  check("process 3: exits 0 when stdin closes", code === 0, `exit status ${code}`);
}

const first = await firstProcess();
const processes = [first.forge];
if (first.sessionId) processes.push(await secondProcess(first.sessionId));
await helperProcess();
const faults = processes.flatMap((p) => p.schemaFaults);
const inbound = processes.reduce((n, p) => n + p.wire.filter((e) => e.direction === "in").length, 0);
check(`every message from Forge validates against the SDK's v1 zod and JSON schemas (${inbound} messages)`,
  faults.length === 0, faults.slice(0, 5).join(" | "));
const sdkSeen = processes.reduce((n, p) => n + p.updates.length, 0);
const wireUpdates = processes.reduce(
  (n, p) => n + p.wire.filter((e) => e.direction === "in" && e.message.method === "session/update").length, 0);
check("the SDK client accepted every session/update sent", sdkSeen === wireUpdates,
  `${wireUpdates} sent, ${sdkSeen} delivered by the SDK`);

if (process.env.ACP_TS_CHECK_WIRE_LOG) {
  // Every message both ways, one JSON line each, for whoever reads a failure.
  const lines = processes.flatMap((p) => p.wire.map((e) => JSON.stringify({ process: p.label, ...e })));
  writeFileSync(process.env.ACP_TS_CHECK_WIRE_LOG, lines.join("\n") + "\n");
}

const width = Math.max(...rows.map((r) => r.name.length));
console.log(`forge acp under @agentclientprotocol/sdk ${SDK_VERSION} (ACP protocol ${acp.PROTOCOL_VERSION})`);
for (const row of rows) {
  console.log(`${row.ok ? "PASS" : "FAIL"}  ${row.name.padEnd(width)}${row.detail ? `  — ${row.detail}` : ""}`);
}
const failed = rows.filter((r) => !r.ok).length;
console.log(failed ? `${failed} of ${rows.length} checks FAILED` : `all ${rows.length} checks passed`);
process.exit(failed ? 1 : 0);
