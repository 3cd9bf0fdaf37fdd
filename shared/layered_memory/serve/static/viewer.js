// The layered-memory viewer: plain DOM calls on the serve API (/v1/...), no build step, no dependencies.
// The bearer key comes from the URL fragment (#key=...), which never reaches the server, or the key form;
// it is kept in sessionStorage for this tab only. Every value is shown with textContent (never as HTML).
"use strict";

const state = { key: null, me: null, user: null, chat: null, query: "" };
const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") node.addEventListener("click", v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
  return node;
}

function status(text, bad) {
  $("status").textContent = text || "";
  $("status").className = bad ? "error" : "muted";
}

async function api(method, path, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== "") url.searchParams.set(k, v);
  const resp = await fetch(url, { method, headers: { Authorization: "Bearer " + state.key } });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const err = new Error((body.error && body.error.message) || resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return body;
}

const enc = encodeURIComponent;
const userPath = () => `/v1/users/${enc(state.user)}`;
const chatPath = () => `${userPath()}/chats/${enc(state.chat)}`;
const when = (t) => (t || "").replace("T", " ").slice(0, 16);

// -- users and chats ---------------------------------------------------------------------------------
async function loadUsers() {
  const { users } = await api("GET", "/v1/users");
  const sel = $("user-select");
  sel.replaceChildren(...users.map((u) => el("option", { value: u, text: u })));
  if (users.length) await selectUser(users[0]);
  else status("No users in this tenant yet.");
}

async function selectUser(user) {
  state.user = user;
  state.chat = null;
  $("user-select").value = user;
  const { chats } = await api("GET", `${userPath()}/chats`);
  $("chat-list").replaceChildren(...chats.map((c) => el("li", {}, el("button", { "data-chat": c, text: c, onclick: () => selectChat(c) }))));
  const jobs = [loadFacts()];
  if (chats.length) jobs.push(selectChat(chats[0]));
  else ["messages", "topics", "context-blocks"].forEach((id) => $(id).replaceChildren());
  await Promise.all(jobs);
  if (state.query) await runSearch();
}

async function selectChat(chat) {
  state.chat = chat;
  for (const b of $("chat-list").querySelectorAll("button")) b.classList.toggle("active", b.dataset.chat === chat);
  $("topic-detail").replaceChildren();
  await Promise.all([loadMessages(), loadSummary(), loadTopics(), loadContext()]);
}

// -- the chat: window, summary ------------------------------------------------------------------------
function messageItem(m, withDelete) {
  const item = el("li", { "data-message-id": m.message_id },
    el("span", { class: "meta", text: `${when(m.create_time)} ${m.role}${m.user_name ? " " + m.user_name : ""}` }),
    el("span", { class: "content", text: m.content }));
  if (withDelete) item.append(el("button", { class: "danger", text: "delete", title: "delete this message", onclick: () => deleteMessage(m) }));
  return item;
}

async function loadMessages() {
  const { messages } = await api("GET", `${chatPath()}/messages`, { limit: 50 });
  $("message-count").textContent = `(newest ${messages.length})`;
  $("messages").replaceChildren(...messages.map((m) => messageItem(m, true)));
}

async function loadSummary() {
  const { summary, quality } = await api("GET", `${chatPath()}/summary`);
  const box = $("summary");
  box.className = summary ? "box" : "box muted";
  box.textContent = summary || "No summary yet.";
  if (quality && quality.quality) box.append(el("div", { class: "meta", text: `version ${quality.version}, quality ${Number(quality.quality.overall_score).toFixed(2)}` }));
}

async function deleteMessage(m) {
  if (!confirm(`Delete message ${m.message_id}?`)) return;
  try {
    await api("DELETE", `${chatPath()}/messages/${enc(m.message_id)}`);
    await Promise.all([loadMessages(), loadContext(), loadFacts(), state.query ? runSearch() : null]);
    status(`Deleted message ${m.message_id}.`);
  } catch (e) { status(`Delete failed: ${e.message}`, true); }
}

// -- topics ---------------------------------------------------------------------------------------------
async function loadTopics() {
  const { topics } = await api("GET", `${chatPath()}/topics`);
  $("topics").replaceChildren(...topics.map((t) => el("li", { "data-topic-id": t.topic_id },
    el("span", { class: "meta", text: `${when(t.create_time)} .. ${when(t.update_time)}` }),
    el("button", { text: t.title, onclick: () => openTopic(t.topic_id) }),
    el("span", { class: "meta", text: ` ${t.message_count} messages${t.is_active ? ", active" : ""}` }))));
  if (!topics.length) $("topics").append(el("li", { class: "muted", text: "No topics yet (threading runs in process())." }));
}

async function openTopic(topicId) {
  const { topic, summaries, messages } = await api("GET", `${userPath()}/topics/${enc(topicId)}`);
  const versions = summaries.slice().reverse().map((s) => {
    const q = s.metadata && s.metadata.quality;
    return el("div", { class: "version box" },
      el("span", { class: "tag", text: `v${s.version}` }),
      el("span", { class: "meta", text: `${when(s.create_time)}${q ? " quality " + Number(q.overall_score).toFixed(2) : ""}` }),
      el("div", { class: "content", text: s.content }));
  });
  $("topic-detail").replaceChildren(
    el("h2", { id: "topic-title", text: topic.title }),
    el("p", { class: "muted", text: Object.keys(topic.keywords || {}).join(", ") }),
    el("h2", { text: `Summaries (${summaries.length} versions, newest first)` }),
    ...(versions.length ? versions : [el("p", { class: "muted", text: "No summary yet." })]),
    el("h2", { text: "Messages" }),
    el("ol", { id: "topic-messages" }, ...messages.map((m) => messageItem(m, false))));
}

// -- context ----------------------------------------------------------------------------------------------
async function loadContext() {
  const q = $("context-query").value.trim();
  const maxTokens = $("context-max-tokens").value;
  const ctx = await api("GET", `${chatPath()}/context`, { query: q, max_tokens: maxTokens });
  $("context-total").textContent = `${ctx.blocks.length} blocks, ${ctx.total_tokens} tokens` + (ctx.max_tokens ? ` (budget ${ctx.max_tokens})` : "");
  $("context-blocks").replaceChildren(...ctx.blocks.map((b) => el("li", { "data-kind": b.kind },
    el("span", { class: "tag", text: `${b.role}/${b.kind}` }),
    el("span", { class: "tag tokens", text: `${b.tokens} tokens` }),
    el("span", { class: "content", text: b.content }))));
}

// -- facts --------------------------------------------------------------------------------------------------
function sources(f) {
  const list = (f.source_messages || []).map((m) => el("li", {}, el("span", { class: "meta", text: `${m.chat_id} ${when(m.create_time)}` }), m.content));
  return list.length ? el("ul", { class: "sources" }, ...list) : null;
}

function factItem(f, label) {
  return el("li", { "data-fact-id": f.entity_id || f.relation_id }, label,
    el("button", { class: "danger", text: "delete", title: "delete this fact", onclick: () => deleteFact(f.entity_id || f.relation_id) }),
    sources(f));
}

async function loadFacts() {
  const facts = await api("GET", `${userPath()}/facts`);
  const p = facts.profile;
  const box = $("profile");
  box.className = p ? "box" : "box muted";
  box.textContent = p ? p.profile_text || "(no text)" : "No profile.";
  if (p && p.preferences && p.preferences.length) {
    box.append(el("div", { class: "meta", text: p.preferences.filter((x) => (x.status || "current") === "current").map((x) => `${x.key}=${x.value}`).join("; ") }));
  }
  $("entities").replaceChildren(...facts.entities.map((e) => factItem(e,
    el("span", {}, el("span", { class: "tag", text: e.entity_type }), el("b", { text: e.entity_name }), `: ${e.description || ""}`))));
  $("relations").replaceChildren(...facts.relations.map((r) => factItem(r,
    el("span", {}, el("b", { text: r.source }), ` ${r.relation_type} `, el("b", { text: r.target }), r.status === "superseded" ? " (superseded)" : ""))));
}

async function deleteFact(factId) {
  if (!confirm(`Delete fact ${factId}?`)) return;
  try {
    const out = await api("DELETE", `${userPath()}/facts/${enc(factId)}`);
    await Promise.all([loadFacts(), state.chat ? loadContext() : null, state.query ? runSearch() : null]);
    status(out.deleted ? `Deleted fact ${factId}.` : `Forgot fact ${factId} for ${state.user}.`);
  } catch (e) { status(`Delete failed: ${e.message}`, true); }
}

// -- search ---------------------------------------------------------------------------------------------------
async function runSearch() {
  const q = $("search-input").value.trim();
  state.query = q;
  if (!q) return;
  const chat = $("search-this-chat").checked ? state.chat : null;
  const res = await api("GET", `${userPath()}/search`, { q, chat_id: chat, k: 10 });
  const down = Object.entries(res.routes).filter(([k, v]) => v !== k).map(([k, v]) => `${k} ${v}`);
  $("search-routes").textContent = down.length ? down.join("; ")
    : `dense and BM25: each hit's rank in a dense-only and a BM25-only search of the same query (– not in their top 50); route used: ${res.routes.hybrid}`;
  const rank = (r) => el("td", { class: "rank", text: r === null || r === undefined ? "–" : r });
  $("search-results").tBodies[0].replaceChildren(...res.hits.map((h) => el("tr", { "data-hit-id": h.id },
    rank(h.rank), rank(h.dense_rank), rank(h.bm25_rank), el("td", { class: "rank", text: Number(h.score).toFixed(3) }),
    el("td", {}, el("span", { class: "meta", text: `${h.meta.session_key || h.meta.chat_id || ""} ${when(h.meta.date)} ${h.meta.role || ""}` }), h.text))));
  if (!res.hits.length) $("search-results").tBodies[0].append(el("tr", {}, el("td", { colspan: 5, class: "muted", text: "No messages found." })));
  $("search-facts").replaceChildren(...res.facts.map((f) => el("li", { "data-fact-id": f.entity_id },
    el("span", { class: "tag", text: f.entity_type }), el("b", { text: f.entity_name }), `: ${f.description || ""}`)));
  if (!res.facts.length) $("search-facts").append(el("li", { class: "muted", text: "No facts found." }));
}

// -- agents and the size monitor (Server-Sent Events read with fetch: EventSource cannot send the key) ----------
let eventsAbort = null;

async function loadAgents() {
  const res = await api("GET", `${userPath()}/agents`);
  $("agents").replaceChildren(...res.agents.map((a) => el("li", {},
    el("b", { text: a.agent_name }), el("span", { class: "meta", text: ` ${a.stats.total_vectors} of ${a.max_vectors} vectors, ` +
      `success ${a.stats.success_rate === null || a.stats.success_rate === undefined ? "–" : Number(a.stats.success_rate).toFixed(0) + "%"}` }))));
  if (res.unavailable) $("agents").append(el("li", { class: "muted", text: res.unavailable }));
  else if (!res.agents.length) $("agents").append(el("li", { class: "muted", text: "No agents." }));
  if (!$("agent-events").children.length) $("agent-events").append(el("li", { text: "Listening: size_warning at 80% of max_vectors, auto_pruned at 100% (checked every 24 h)." }));
  followEvents();
}

async function followEvents() {
  if (eventsAbort) eventsAbort.abort();
  eventsAbort = new AbortController();
  try {
    const resp = await fetch(`${userPath()}/agents/events`, { headers: { Authorization: "Bearer " + state.key }, signal: eventsAbort.signal });
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const chunk = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const kind = (chunk.match(/^event: (.*)$/m) || [])[1];
        const data = (chunk.match(/^data: (.*)$/m) || [])[1];
        if (kind && data) {
          const ev = JSON.parse(data);
          $("agent-events").prepend(el("li", { text: `${new Date().toLocaleTimeString()} ${kind} ${ev.agent_name}: ${ev.message || ""}` }));
        }
      }
    }
  } catch (e) { if (e.name !== "AbortError") status(`Event stream closed: ${e.message}`, true); }
}

// -- wiring ----------------------------------------------------------------------------------------------------------
function showTab(name) {
  for (const b of $("tabs").querySelectorAll("button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== `tab-${name}`;
  if (name === "agents") loadAgents().catch((e) => status(e.message, true));
}

function guard(fn) {
  return (ev) => { if (ev) ev.preventDefault(); fn().catch((e) => status(e.message, true)); };
}

async function start() {
  const t0 = performance.now();
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("key");
  if (fromHash) { sessionStorage.setItem("lm-key", fromHash); history.replaceState(null, "", location.pathname); }
  state.key = sessionStorage.getItem("lm-key");
  if (!state.key) { $("key-form").hidden = false; status("Enter a bearer key from the server's keys file."); return; }
  try {
    state.me = await api("GET", "/v1/me");
  } catch (e) {
    sessionStorage.removeItem("lm-key");
    $("key-form").hidden = false;
    status(e.status === 401 ? "Unknown key: enter another." : e.message, true);
    return;
  }
  $("whoami").textContent = `tenant ${state.me.tenant}` + (state.me.user ? `, user ${state.me.user}` : "");
  await loadUsers();
  const ms = Math.round(performance.now() - t0);
  document.body.dataset.ready = "1";
  document.body.dataset.loadMs = String(ms);
  status(`Loaded in ${ms} ms.`);
}

$("key-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  sessionStorage.setItem("lm-key", $("key-input").value.trim());
  $("key-form").hidden = true;
  start();
});
$("user-select").addEventListener("change", guard(() => selectUser($("user-select").value)));
$("tabs").addEventListener("click", (ev) => { if (ev.target.dataset.tab) showTab(ev.target.dataset.tab); });
$("context-form").addEventListener("submit", guard(loadContext));
$("search-form").addEventListener("submit", guard(runSearch));
start().catch((e) => status(e.message, true));
