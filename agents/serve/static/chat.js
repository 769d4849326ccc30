"use strict";
let sessionId = null;
const log = document.getElementById("log");

function headers(json) {
  const h = {};
  const token = document.getElementById("token").value;
  if (token) h["Authorization"] = "Bearer " + token;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

function line(text, css) {
  const p = document.createElement("p");
  p.className = css;
  p.textContent = text;
  log.appendChild(p);
  return p;
}

async function ensureSession() {
  if (sessionId) return sessionId;
  const r = await fetch("/sessions", {method: "POST", headers: headers(true), body: "{}"});
  if (!r.ok) throw new Error((await r.json()).error);
  sessionId = (await r.json()).session_id;
  document.getElementById("session").textContent = "session " + sessionId;
  return sessionId;
}

async function readEvents(response) {
  // A stream that stops before its run's RunEnded (a dropped connection, a server that
  // died) is joined again from the last event seen, as often as it takes (for a while).
  let answer = null, last = null, ended = false;
  for (let tries = 0; ; tries++) {
    try {
      if (!response.ok) throw new Error((await response.json()).error);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, {stream: true});
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const id = chunk.split("\n").find(l => l.startsWith("id: "));
          const data = chunk.split("\n").find(l => l.startsWith("data: "));
          if (id) last = id.slice(4);
          if (!data) continue;
          const event = JSON.parse(data.slice(6));
          if (event.type === "RunEnded") ended = true;
          answer = show(event, answer);
        }
      }
    } catch (error) {
      if (last === null) { line(String(error.message || error), "error"); break; }
    }
    if (ended || last === null || tries >= 60) break;
    await new Promise(resolve => setTimeout(resolve, 500));
    try {
      response = await fetch("/sessions/" + sessionId + "/events?after=" + last, {headers: headers(false)});
    } catch (error) {
      response = {ok: false, json: async () => ({error: String(error)})};
    }
  }
  await timeline();
}

let thinking = null;  // the reasoning being streamed, folded

function reasoningBox(text) {
  const box = document.createElement("details");
  box.className = "reasoning";
  const summary = document.createElement("summary");
  summary.textContent = "reasoning";
  const body = document.createElement("pre");
  body.textContent = text;
  box.append(summary, body);
  log.appendChild(box);
  return box;
}

async function thumbnail(sha) {
  // An image the session holds, fetched with the token (an <img> cannot send it).
  const img = document.createElement("img");
  img.className = "thumb";
  img.alt = "image " + sha.slice(0, 12);
  log.appendChild(img);
  const r = await fetch("/sessions/" + sessionId + "/images/" + sha, {headers: headers(false)});
  if (r.ok) img.src = URL.createObjectURL(await r.blob());
}

function partsOf(content) {
  return Array.isArray(content) ? content : [];
}

function show(event, answer) {
  if (event.type === "ReasoningDelta" && event.content) {
    if (!thinking) thinking = reasoningBox("");
    thinking.querySelector("pre").textContent += event.content;
  } else if (event.type === "InferenceCompleted") {
    const parts = partsOf(event.response && event.response.content);
    const texts = parts.filter(p => p.kind === "ReasoningPart" && p.text).map(p => p.text);
    if (!thinking && texts.length) reasoningBox(texts.join("\n"));
    thinking = null;
  } else if (event.type === "InferenceDelta" && event.content) {
    if (!answer) answer = line("", "agent");
    answer.textContent += event.content;
  } else if (event.type === "ToolCallCompleted") {
    const e = event.tool_execution;
    const parts = partsOf(e.content);
    const said = parts.length ? parts.map(p => p.text || "[" + p.media_type + "]").join(" ") : JSON.stringify(e.error ? e.error.message : e.value);
    line("tool " + e.tool_call.name + " -> " + said, "tool");
    for (const p of parts) if (p.kind === "ImagePart" && p.blob) thumbnail(p.blob.sha256);
  } else if (event.type === "ToolCallBlocked") {
    line("tool " + event.tool_execution.tool_call.name + " blocked", "tool");
  } else if (event.type === "ApprovalRequested") {
    for (const call of event.calls) approval(call);
  } else if (event.type === "InputRequested") {
    for (const q of event.questions) question(q);
  } else if (event.type === "ExecutionCompleted" && event.final_response && !answer) {
    answer = line(event.final_response, "agent");
  } else if (event.type === "RunFailed") {
    line("the run failed: " + event.message, "error");
  }
  return answer;
}

function approval(call) {
  const box = document.createElement("div");
  box.className = "approval";
  box.textContent = "Approve " + call.name + " " + JSON.stringify(call.arguments) + "? ";
  for (const [label, approved] of [["Approve", true], ["Deny", false]]) {
    const b = document.createElement("button");
    b.textContent = label;
    b.onclick = () => decide(call.id, approved, box);
    box.appendChild(b);
  }
  log.appendChild(box);
}

async function decide(callId, approved, box) {
  const body = JSON.stringify({call_id: callId, approved: approved, reason: approved ? "" : "denied in the page"});
  const r = await fetch("/sessions/" + sessionId + "/approvals", {method: "POST", headers: headers(true), body});
  if (!r.ok) { line((await r.json()).error, "error"); return; }
  box.remove();
  const after = (await r.json()).events_after;
  await readEvents(await fetch("/sessions/" + sessionId + "/events?after=" + after, {headers: headers(false)}));
}

function question(q) {
  const box = document.createElement("div");
  box.className = "approval question";
  box.appendChild(document.createTextNode(q.message + " "));
  const fields = {};
  const properties = (q.schema && q.schema.properties) || {};
  for (const [name, spec] of Object.entries(properties)) {
    const label = document.createElement("label");
    label.textContent = (spec.title || name) + " ";
    const input = document.createElement("input");
    input.name = name;
    input.type = spec.type === "boolean" ? "checkbox" : "text";
    label.appendChild(input);
    box.appendChild(label);
    fields[name] = [input, spec.type];
  }
  for (const [label, action] of [["Answer", "accept"], ["Decline", "decline"]]) {
    const b = document.createElement("button");
    b.textContent = label;
    b.onclick = () => answer(q.call_id, action, fields, box);
    box.appendChild(b);
  }
  log.appendChild(box);
}

async function answer(callId, action, fields, box) {
  const body = {call_id: callId, action: action};
  if (action === "accept") {
    body.content = {};
    for (const [name, [input, type]] of Object.entries(fields)) {
      if (type === "boolean") body.content[name] = input.checked;
      else if (input.value.trim() === "") continue;  // left blank: unanswered, never "" or 0
      else if (type === "number" || type === "integer") body.content[name] = Number(input.value);
      else body.content[name] = input.value;
    }
  }
  const r = await fetch("/sessions/" + sessionId + "/inputs", {method: "POST", headers: headers(true), body: JSON.stringify(body)});
  if (!r.ok) { line((await r.json()).error, "error"); return; }
  box.remove();
  const after = (await r.json()).events_after;
  await readEvents(await fetch("/sessions/" + sessionId + "/events?after=" + after, {headers: headers(false)}));
}

async function timeline() {
  const r = await fetch("/sessions/" + sessionId + "/timeline", {headers: headers(false)});
  const body = document.querySelector("#timeline tbody");
  body.textContent = "";
  for (const row of (await r.json()).rows) {
    const tr = document.createElement("tr");
    for (const cell of [row.step, row.step_type, row.tools.join(", "), row.input_tokens + row.output_tokens, row.stop_reason || ""]) {
      const td = document.createElement("td");
      td.textContent = cell;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

document.getElementById("send").addEventListener("submit", async (e) => {
  e.preventDefault();
  const input = document.getElementById("message");
  const text = input.value;
  if (!text) return;
  input.value = "";
  try {
    const id = await ensureSession();
    line(text, "user");
    const r = await fetch("/sessions/" + id + "/messages", {method: "POST", headers: headers(true), body: JSON.stringify({message: text})});
    if (!r.ok) { line((await r.json()).error, "error"); return; }
    await readEvents(r);
  } catch (error) { line(String(error), "error"); }
});
