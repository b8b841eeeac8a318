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

// The advisor's answer as a table: one row per legal move, the columns that have values.
function adviceTable(advice) {
  const columns = ["policy", "value", "visits", "q", "total"].filter(
    c => advice.moves.some(m => m[c] !== null && m[c] !== undefined));
  const withTerms = advice.moves.some(m => Object.keys(m.terms || {}).length);
  const head = ["#", "move", ...columns, ...(withTerms ? ["terms"] : [])];
  const table = el("table", {id: "advice-table"}, el("tr", {}, ...head.map(c => el("th", {}, c))));
  for (const m of advice.moves) {
    const cells = [String(m.number), m.name, ...columns.map(c => fmt(m[c]))];
    if (withTerms) {
      cells.push(Object.entries(m.terms).filter(([, v]) => Math.abs(v) > 1e-9)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`).join(", "));
    }
    table.append(el("tr", {}, ...cells.map(c => el("td", {}, c))));
  }
  return table;
}

function showAdvice(target, advice) {
  // the advisor's explanation of the chosen move (its "why:" line); the table holds the rest
  const why = (advice.text || "").split("\n").filter(line => line.startsWith("why"));
  target.replaceChildren(
    el("div", {}, advice.champion ? `champion ${advice.champion}, value ${fmt(advice.value)}`
                                  : "no champion network"),
    adviceTable(advice),
    el("pre", {id: "advice-text"}, why.join("\n") || "(no explanation)"),
    el("div", {class: "note"}, advice.note || ""));
}
