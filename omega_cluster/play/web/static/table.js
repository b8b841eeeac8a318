// The table page: start a game, draw the person's view, play moves by clicks, ask the advisor.
"use strict";

let tableId = null;
let version = 0;  // bumped on every redraw (what a test waits on after a click)

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
  const status = document.getElementById("status");
  status.textContent = table.over
    ? `game over · ${table.game}, seed ${table.seed}`
    : `${table.game}, seed ${table.seed} · ` +
      (waiting === null ? "the others are playing" : `your move (seat ${waiting})`);
  const board = document.getElementById("board");
  board.replaceChildren(drawPosition(table.view, {
    legal: waiting === null ? [] : table.view.legal,
    onMove: number => play(waiting, number),
    seats: table.seats,
    mine: table.seat,
    you: table.humans.includes(table.seat),
  }));
  board.dataset.version = String(++version);
  const events = document.getElementById("events");
  events.replaceChildren(...table.events.filter(e => !e.chance).map(
    e => el("li", {class: table.humans.includes(e.seat) ? "mine" : ""},
            `seat ${e.seat} (${e.player}): ${e.name}`)));
  events.scrollTop = events.scrollHeight;
  const result = document.getElementById("result");
  result.replaceChildren();
  if (table.result) {
    const r = table.result;
    const rows = table.seats.map((spec, i) => el("tr", {},
      el("td", {}, `seat ${i} · ${i === table.seat ? "you" : spec}`),
      el("td", {}, fmt(r.scores[i], 0)), el("td", {}, bar(r.win_shares[i], 0, 1, 2)),
      el("td", {}, fmt(r.returns[i], 2))));
    result.append(el("h3", {}, "game over"), el("table", {id: "returns"},
      el("tr", {}, ...["seat", "score", "win share", "return"].map(h => el("th", {}, h))), ...rows));
  }
  document.getElementById("final-box").hidden = !table.final;
  document.getElementById("final").textContent = table.final || "";
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
  const names = document.getElementById("game-list");
  for (const game of info.games) names.append(el("option", {value: game.name}));
  document.getElementById("players-hint").textContent =
    `games: ${info.games.map(g => g.name).join(", ")} (any OpenSpiel game: openspiel:<name>) · ` +
    "players: you, " + info.players.join(", ");
  document.getElementById("new-table").onsubmit = start;
  document.getElementById("advise").onclick = advise;
}

init().catch(showError);
