// Shared by both pages: JSON calls to the server's /api and small DOM helpers.
"use strict";

async function api(path, options) {
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function post(path, body) {
  return api(path, {method: "POST", headers: {"Content-Type": "application/json"},
                    body: JSON.stringify(body)});
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "onclick") node.onclick = value; else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function showError(err) {
  document.getElementById("error").textContent = err ? String(err.message || err) : "";
}

function fmt(x) {
  return x === null || x === undefined ? "" : (typeof x === "number" ? x.toFixed(3) : String(x));
}

// The advisor's answer as a table: one row per legal move.
function adviceTable(advice) {
  const columns = ["number", "name", "policy", "value", "visits", "q", "total"];
  const used = columns.filter(c => c === "number" || c === "name" ||
                              advice.moves.some(m => m[c] !== null && m[c] !== undefined));
  const table = el("table", {id: "advice-table"},
                   el("tr", {}, ...used.map(c => el("th", {}, c)), el("th", {}, "terms")));
  for (const m of advice.moves) {
    const terms = Object.entries(m.terms || {}).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", ");
    table.append(el("tr", {}, ...used.map(c => el("td", {}, fmt(m[c]))), el("td", {}, terms)));
  }
  return table;
}

function showAdvice(target, advice) {
  target.replaceChildren(
    el("div", {}, advice.champion ? `champion ${advice.champion}, value ${fmt(advice.value)}`
                                  : "no champion network"),
    adviceTable(advice),
    el("pre", {id: "advice-text"}, advice.text || ""),
    el("div", {}, advice.note || ""));
}
