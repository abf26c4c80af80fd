// The durable console page: renders what the server sends, always as text (never as HTML).
"use strict";
const TOKEN = document.querySelector('meta[name="durable-token"]').content;
let sessions = [], current = {session: 0, conversation: "root"}, source = null, lastSeq = 0, state = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function parseHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  current = {session: parseInt(p.get("s") || "0", 10) || 0, conversation: p.get("c") || "root"};
}

async function start() {
  parseHash();
  const r = await fetch("/api/sessions", {credentials: "same-origin"});
  if (!r.ok) { document.getElementById("status").textContent = "refused: " + r.status; return; }
  sessions = await r.json();
  connect();
  window.addEventListener("hashchange", () => { parseHash(); connect(); });
  setInterval(tick, 250);
  document.getElementById("raw-toggle").addEventListener("change", (e) => {
    document.getElementById("raw").hidden = !e.target.checked;
  });
}

function connect() {
  if (source) source.close();
  lastSeq = 0; state = null;
  document.getElementById("transcript").replaceChildren();
  document.getElementById("approvals").replaceChildren();
  document.getElementById("conv-name").textContent = current.conversation;
  const url = `/api/sessions/${current.session}/events?conversation=${encodeURIComponent(current.conversation)}&after=0`;
  source = new EventSource(url);
  source.addEventListener("entries", (ev) => { for (const e of JSON.parse(ev.data)) addEntry(e); });
  source.addEventListener("state", (ev) => { state = JSON.parse(ev.data); render(); });
  source.onopen = () => { document.getElementById("status").textContent = "live"; };
  source.onerror = () => { document.getElementById("status").textContent = "reconnecting…"; };
}

function addEntry(e) {
  if (e.seq <= lastSeq) return;
  lastSeq = e.seq;
  const kind = e.type || "entry";
  const box = el("div", {class: `entry ${kind}`, "data-seq": e.seq});
  let who = `#${e.seq} ${kind}`;
  if (kind === "assistant") who += ` · attempt ${e.attempt} · ${e.stop_reason}`;
  if (kind === "tool_result") who += ` · ${e.tool_name} (${e.call_id})`;
  box.append(el("div", {class: "who"}, who));
  if (kind === "assistant" && (e.stop_reason === "aborted" || e.interrupted)) {
    box.classList.add("aborted");
    box.append(el("span", {class: "badge"}, e.interrupted ? "cut off by a crash: aborted partial" : "aborted partial"));
  }
  if (e.is_error || e.error) box.classList.add("error");
  if (e.reasoning_text) box.append(reasoning(e.reasoning_text, null));
  const text = e.text ?? e.content ?? e.summary ?? "";
  box.append(el("div", {class: "text"}, text));
  for (const c of e.tool_calls || []) box.append(el("div", {class: "call"}, `→ ${c.name}(${c.arguments}) [${c.id}]`));
  if (e.error) box.append(el("div", {class: "retry"}, e.error));
  document.getElementById("transcript").append(box);
}

// A model's reasoning, collapsed: a <details> whose summary says how long it is. `id` (the live
// answer's) keeps it open across re-renders once a person opened it.
let partialReasoningOpen = false;
function reasoning(text, id) {
  const box = el("details", {class: "reasoning"}, el("summary", {}, `Reasoning (${text.length} characters)`),
                 el("div", {class: "text"}, text));
  if (id) {
    box.id = id; box.open = partialReasoningOpen;
    box.addEventListener("toggle", () => { partialReasoningOpen = box.open; });
  }
  return box;
}

function render() {
  document.getElementById("status").textContent = `live · ${state.location} · ${state.owner}`;
  renderNav(); renderPartial(); renderApprovals(); renderRecovery(); renderTasks();
  renderUsage();
  document.getElementById("raw").textContent = JSON.stringify(state.live[current.conversation] || {}, null, 2);
}

function renderNav() {
  const nav = document.getElementById("sessions");
  nav.replaceChildren();
  sessions.forEach((s) => {
    nav.append(el("h3", {}, s.name));
    if (s.index !== current.session) { nav.append(el("a", {href: `#s=${s.index}&c=root`}, "open")); return; }
    for (const c of state.conversations) {
      const a = el("a", {href: `#s=${s.index}&c=${encodeURIComponent(c.id)}`, "data-conversation": c.id}, c.id,
                   el("span", {class: "state"}, c.state));
      if (c.id === current.conversation) a.classList.add("current");
      nav.append(a);
    }
  });
  document.getElementById("summary").textContent =
    `${state.conversations.length} conversation(s), ${state.tasks.filter((t) => !t.outcome).length} live task(s)`;
}

function renderPartial() {
  const box = document.getElementById("partial");
  const live = state.live[current.conversation] || {};
  box.replaceChildren();
  const gen = live.generation;
  if (gen) {
    box.append(el("div", {class: "who"}, `answering · attempt ${gen.attempt}` + (gen.message && gen.message.text ? " · streaming" : "")));
    if (gen.message && gen.message.reasoning) box.append(reasoning(gen.message.reasoning, "partial-reasoning"));
    box.append(el("div", {class: "text", id: "partial-text"}, (gen.message && gen.message.text) || ""));
    for (const c of (gen.message && gen.message.tool_calls) || []) box.append(el("div", {class: "call"}, `→ ${c.name}(${c.arguments})`));
    if (gen.retry) box.append(el("div", {class: "retry", "data-at": gen.retry.at, "data-attempt": gen.retry.attempt,
      "data-error": `${gen.retry.kind}${gen.retry.status_code ? ", HTTP " + gen.retry.status_code : ""}: ${gen.retry.error}`}));
    if (gen.deferred) box.append(el("div", {class: "retry"}, "a background job: polled until it is ready"));
  }
  for (const t of live.tools || []) {
    box.append(el("div", {class: "tool"}, el("strong", {}, `${t.name} (${t.status})`), el("div", {class: "text"}, t.output)));
  }
  if (live.run_failure) box.append(el("div", {class: "retry"}, `unanswered: ${live.run_failure.reason}: ${live.run_failure.detail}`));
  tick();
}

function tick() {
  for (const r of document.querySelectorAll(".retry[data-at]")) {
    const left = Math.max(0, parseFloat(r.dataset.at) - Date.now() / 1000);
    r.textContent = `attempt ${r.dataset.attempt} failed (${r.dataset.error}); attempt ${parseInt(r.dataset.attempt, 10) + 1} in ${left.toFixed(1)} s`;
  }
}

function renderApprovals() {
  const box = document.getElementById("approvals");
  const pending = new Map(state.approvals.map((a) => [a.call_id, a]));
  for (const card of [...box.children]) if (!pending.has(card.dataset.call) && !card.dataset.keep) card.remove();
  for (const a of state.approvals) {
    if (box.querySelector(`[data-call="${CSS.escape(a.call_id)}"]`)) continue;
    box.append(approvalCard(a));
  }
}

function approvalCard(a) {
  const message = el("div", {class: "message"});
  const args = el("textarea", {class: "arguments", hidden: ""});
  args.value = prettyJson(a.arguments);
  const reason = el("input", {class: "reason", placeholder: "reason (the model reads it)", hidden: ""});
  const card = el("div", {class: "approval", "data-call": a.call_id},
    el("div", {}, el("strong", {}, a.tool), ` · call ${a.call_id} · conversation ${a.conversation_id}`),
    el("pre", {class: "given"}, prettyJson(a.arguments)),
    a.schema ? el("details", {class: "schema"}, el("summary", {}, "the tool's schema (an edit is checked against it)"),
                  el("pre", {}, JSON.stringify(a.schema, null, 2))) : null,
    args, reason, message);
  // data-state on the card: "sending", then "sent" (committed) or "refused" (buttons usable again).
  const send = async (decision) => {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    card.dataset.state = "sending"; message.className = "message"; message.textContent = "sending…";
    const r = await fetch(`/api/sessions/${current.session}/decisions`, {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-Durable-Token": TOKEN}, body: JSON.stringify(decision)});
    const body = await r.json().catch(() => ({}));
    if (r.ok) {
      card.dataset.keep = "1"; card.dataset.state = "sent"; message.className = "message sent";
      message.textContent = decision.approve ? "approved: sent (committed)" : "denied: sent (committed)";
    } else {
      message.textContent = `not sent: ${body.error || r.status}`; card.dataset.state = "refused";
      if (r.status === 400) { for (const b of card.querySelectorAll("button")) b.disabled = false; }
      else card.dataset.keep = "1";
    }
  };
  const approve = el("button", {class: "approve", onclick: () => send({call_id: a.call_id, approve: true})}, "Approve");
  const edit = el("button", {class: "edit", onclick: () => {
    if (args.hidden) { args.hidden = false; edit.textContent = "Send edited"; return; }
    const problem = checkArguments(args.value);
    if (problem) { message.textContent = problem; card.dataset.state = "refused"; return; }
    send({call_id: a.call_id, approve: true, arguments: JSON.stringify(JSON.parse(args.value))});
  }}, "Edit");
  const deny = el("button", {class: "deny", onclick: () => {
    if (reason.hidden) { reason.hidden = false; deny.textContent = "Send denial"; return; }
    send({call_id: a.call_id, approve: false, reason: reason.value});
  }}, "Deny");
  card.append(el("div", {}, approve, " ", edit, " ", deny));
  return card;
}

function prettyJson(text) { try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; } }

// The edited arguments must be a JSON object; the server checks them against the tool's schema
// (kept with the waiting call) before anything is sent, and answers 400 with the problems.
function checkArguments(text) {
  let value;
  try { value = JSON.parse(text); } catch (e) { return `not JSON: ${e.message}`; }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "the arguments must be a JSON object";
  return null;
}

// Tokens by kind, apart (input not cached, cache reads and writes, output less reasoning,
// reasoning), per model and in total, with the cost when the console knows the model's price.
function renderUsage() {
  const u = state.usage_by_kind, body = document.querySelector("#usage tbody");
  const cost = (c) => (c === null || c === undefined ? "unknown" : `$${c.toFixed(4)}`);
  const row = (name, m, cls) => el("tr", {class: cls || ""}, el("td", {}, name), el("td", {}, m.requests),
    el("td", {}, m.input), el("td", {}, m.cache_read), el("td", {}, m.cache_write), el("td", {}, m.output),
    el("td", {}, m.reasoning), el("td", {class: "cost"}, cost(m.cost)));
  body.replaceChildren(...u.models.map((m) => row(m.model, m)));
  if (u.models.length) body.append(row("total", u.total, "total"));
  document.getElementById("usage-note").textContent =
    `${u.tool_calls} tool call(s), ${u.tool_seconds.toFixed(1)} s of tool runtime` +
    (u.unpriced.length ? ` · no price known for ${u.unpriced.join(", ")}` : "");
}

function renderRecovery() {
  const box = document.getElementById("recovery");
  box.replaceChildren();
  if (!state.recovery.length) box.append(el("div", {}, "Nothing was cut off."));
  for (const n of state.recovery) box.append(el("div", {class: `recovery-note ${n.kind}`}, `${n.where}: ${n.text}`));
}

function renderTasks() {
  const body = document.querySelector("#tasks tbody");
  body.replaceChildren();
  for (const t of state.tasks) {
    body.append(el("tr", {"data-task": t.id}, el("td", {}, t.id), el("td", {}, t.describe),
      el("td", {}, t.outcome || t.state), el("td", {}, t.phase_label || t.phase || ""),
      el("td", {}, t.attempt ?? ""), el("td", {}, t.restarts)));
  }
}

start();
