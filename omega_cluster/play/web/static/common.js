// Shared by both pages: JSON calls to the server's /api, small DOM helpers, bars, the advisor.
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

function fmt(x, digits) {
  if (x === null || x === undefined) return "";
  return typeof x === "number" ? x.toFixed(digits === undefined ? 3 : digits) : String(x);
}

// A bar for a value on a scale [lo, hi] (lo < 0: the bar grows both ways from zero), with the
// number beside it in small print: what a person compares is the bars' lengths.
function bar(value, lo, hi, digits) {
  const cell = el("span", {class: "barcell", title: fmt(value, digits)});
  if (value === null || value === undefined) return cell;
  lo = Math.min(0, lo);
  hi = Math.max(0, hi);
  const span = hi - lo || 1;
  const zero = (-lo / span) * 100, size = (Math.abs(value) / span) * 100;
  const left = value >= 0 ? zero : zero - size;
  const box = el("span", {class: "barbox"},
    el("span", {class: "bar " + (value >= 0 ? "pos" : "neg"),
                style: `left:${left.toFixed(1)}%;width:${Math.max(size, 0.8).toFixed(1)}%`}));
  if (lo < 0) box.append(el("span", {class: "axis", style: `left:${zero.toFixed(1)}%`}));
  cell.append(box, el("span", {class: "num"}, fmt(value, digits)));
  return cell;
}

function range(values) {
  const present = values.filter(v => v !== null && v !== undefined);
  return [Math.min(0, ...present), Math.max(0, ...present)];
}

const ADVICE_COLUMNS = [["policy", "prior", 3], ["visits", "visits", 3], ["value", "value", 3],
                        ["q", "Q", 3], ["total", "score", 1]];

// The advisor's answer: one row per legal move with a bar per measure (the champion's prior and
// value, the search's visits and Q, the heuristic's score), the chosen move and the runner-up
// marked, the "why" with a bar per named term, and every term of every move on request.
function adviceTable(advice) {
  const columns = ADVICE_COLUMNS.filter(
    ([key]) => advice.moves.some(m => m[key] !== null && m[key] !== undefined));
  const scales = Object.fromEntries(columns.map(([key]) => [key, range(advice.moves.map(m => m[key]))]));
  const e = advice.explanation;
  const head = el("tr", {}, el("th", {}, "#"), el("th", {}, "move"),
                  ...columns.map(([, label]) => el("th", {}, label)));
  const table = el("table", {id: "advice-table"}, head);
  for (const m of advice.moves) {
    const mark = e && m.action === e.chosen ? "chosen" : (e && m.action === e.runner_up ? "runner" : "");
    const name = el("td", {class: "move-name"}, m.name);
    if (mark) name.append(el("span", {class: "tag " + mark}, mark === "chosen" ? "chosen" : "runner-up"));
    table.append(el("tr", {class: mark}, el("td", {}, String(m.number)), name,
      ...columns.map(([key, , digits]) => el("td", {}, bar(m[key], ...scales[key], digits)))));
  }
  return table;
}

function whyBars(e) {
  const box = el("div", {id: "advice-why"});
  if (!e || !e.top_terms.length) return box;
  const largest = Math.max(...e.top_terms.map(([, v]) => Math.abs(v)));
  for (const [term, share] of e.top_terms) {
    box.append(el("div", {class: "why-row"}, el("span", {class: "term"}, term),
                  bar(share, -largest, largest, 2)));
  }
  return box;
}

function termsMatrix(advice) {
  // rows: the terms that differ between moves; columns: the moves by number
  const names = [...new Set(advice.moves.flatMap(m => Object.keys(m.terms || {})))].filter(
    t => new Set(advice.moves.map(m => (m.terms[t] || 0).toFixed(6))).size > 1);
  if (!names.length) return el("div");
  const all = advice.moves.flatMap(m => names.map(t => m.terms[t] || 0));
  const largest = Math.max(...all.map(Math.abs)) || 1;
  const table = el("table", {class: "terms"},
    el("tr", {}, el("th", {}, "term"), ...advice.moves.map(m => el("th", {title: m.name}, String(m.number)))));
  for (const t of names) {
    table.append(el("tr", {}, el("td", {class: "term"}, t),
      ...advice.moves.map(m => el("td", {}, bar(m.terms[t] || 0, -largest, largest, 1)))));
  }
  return el("details", {id: "advice-terms"},
            el("summary", {}, "every term of every move (the heuristic's score is their sum)"), table);
}

function showAdvice(target, advice) {
  // the advisor's explanation of the chosen move (its "why:" line), then bars for its terms
  const why = (advice.text || "").split("\n").filter(line => line.startsWith("why"));
  const head = advice.champion
    ? el("div", {class: "advice-head"}, `champion ${advice.champion}: value `,
         bar(advice.value, Math.min(0, advice.value), Math.max(1, advice.value), 3))
    : el("div", {class: "advice-head"}, "no champion network");
  target.replaceChildren(head, adviceTable(advice),
    el("p", {id: "advice-text"}, why.join(" ") || "(no explanation)"),
    whyBars(advice.explanation), termsMatrix(advice),
    el("div", {class: "note"}, advice.note || ""));
}
