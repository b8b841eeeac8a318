// The table page: start a game, show the person's view, post moves, ask the advisor.
"use strict";

let tableId = null;

function parseParams(text) {
  const params = {};
  for (const part of text.split(",").map(s => s.trim()).filter(Boolean)) {
    const [key, ...rest] = part.split("=");
    const raw = rest.join("=").trim();
    let value = raw;
    if (/^-?\d+$/.test(raw)) value = parseInt(raw, 10);
    else if (/^-?\d*\.\d+$/.test(raw)) value = parseFloat(raw);
    else if (raw === "true" || raw === "false") value = raw === "true";
    params[key.trim()] = value;
  }
  return params;
}

function draw(table) {
  tableId = table.id;
  document.getElementById("table").hidden = false;
  const waiting = table.waiting_for;
  const who = table.seats.map((s, i) => `${i}: ${s}`).join(", ");
  document.getElementById("status").textContent = table.over
    ? `game over (${table.game}, seed ${table.seed}; seats ${who})`
    : `${table.game}, seed ${table.seed}; seats ${who}; seat ${waiting} to move`;
  document.getElementById("view-title").textContent = `seat ${table.seat} sees`;
  document.getElementById("view").textContent = table.view.text;
  const moves = document.getElementById("moves");
  moves.replaceChildren();
  if (waiting !== null) {
    for (const [number, , name] of table.view.legal) {
      moves.append(el("button", {class: "move", type: "button", "data-move": number,
                                 onclick: () => play(waiting, number)}, `${number}. ${name}`));
    }
  }
  const events = document.getElementById("events");
  events.replaceChildren(...table.events.filter(e => !e.chance).map(
    e => el("li", {}, `seat ${e.seat} (${e.player}): ${e.name}`)));
  events.scrollTop = events.scrollHeight;
  const result = document.getElementById("result");
  result.replaceChildren();
  if (table.result) {
    result.append(el("h3", {}, "result"), el("div", {id: "returns"},
      "returns: " + table.result.returns.map((r, i) => `seat ${i} ${fmt(r)}`).join(", ")));
  }
  const final = document.getElementById("final");
  final.hidden = !table.final;
  final.textContent = table.final ? "final position:\n" + table.final : "";
  document.getElementById("advise").disabled = waiting === null;
  document.getElementById("advice").replaceChildren();
}

async function start(event) {
  event.preventDefault();
  showError(null);
  const seed = document.getElementById("seed").value;
  const body = {game: document.getElementById("game").value,
                params: parseParams(document.getElementById("params").value),
                seats: document.getElementById("seats").value};
  if (seed !== "") body.seed = parseInt(seed, 10);
  try { draw(await post("/api/tables", body)); } catch (err) { showError(err); }
}

async function play(seat, move) {
  showError(null);
  try { draw(await post(`/api/tables/${tableId}/move`, {seat: seat, move: move})); }
  catch (err) { showError(err); }
}

async function advise() {
  showError(null);
  const think = document.getElementById("think").value || "0";
  const target = document.getElementById("advice");
  target.textContent = "thinking…";
  try { showAdvice(target, await api(`/api/tables/${tableId}/advice?think=${think}`)); }
  catch (err) { target.textContent = ""; showError(err); }
}

async function init() {
  const info = await api("/api/games");
  const select = document.getElementById("game");
  for (const game of info.games) select.append(el("option", {value: game.name}, game.name));
  select.value = "kuhn_poker";
  document.getElementById("players-hint").textContent = "players: you, " + info.players.join(", ");
  document.getElementById("new-table").onsubmit = start;
  document.getElementById("advise").onclick = advise;
}

init().catch(showError);
