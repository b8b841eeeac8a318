// The game viewer: a run's recorded games, position by position, with the recorded visits.
"use strict";

let current = null;  // {run, game, positions}
let step = 0;

function selected(id) { return document.getElementById(id).value; }

function showStep() {
  const p = current.positions[step];
  document.getElementById("step-label").textContent =
    `decision ${step + 1} of ${current.positions.length} (seat ${p.seat} to move)`;
  // the position as the deciding seat saw it, drawn as the table draws it, the move played lit
  document.getElementById("position").replaceChildren(drawPosition(p.view, {
    played: p.action, mine: p.seat, seats: current.seats}));
  document.getElementById("full-text").textContent = p.text;
  const table = document.getElementById("policy");
  table.replaceChildren(el("tr", {}, el("th", {}, "move"), el("th", {}, "visit share")));
  for (const m of p.moves) {
    const played = m.action === p.action;
    const share = m.policy === null ? el("span", {class: "note"}, "no search") : bar(m.policy, 0, 1, 3);
    table.append(el("tr", {class: played ? "played" : ""},
                    el("td", {}, m.name + (played ? "  (played)" : "")), el("td", {}, share)));
  }
  const targets = [`played: ${p.action_name}`, `value target (final returns): ${p.returns.map(x => fmt(x)).join(", ")}`];
  if (p.round_outcome) targets.push(`round outcome: ${p.round_outcome.map(x => fmt(x)).join(", ")}`);
  if (p.root_value) targets.push(`search value: ${p.root_value.map(x => fmt(x)).join(", ")}`);
  document.getElementById("targets").replaceChildren(...targets.map(t => el("div", {class: "note"}, t)));
  document.getElementById("prev").disabled = step === 0;
  document.getElementById("first").disabled = step === 0;
  document.getElementById("next").disabled = step === current.positions.length - 1;
  document.getElementById("advice").replaceChildren();
}

function go(to) {
  if (!current) return;
  step = Math.max(0, Math.min(current.positions.length - 1, to));
  showStep();
}

async function loadGame() {
  showError(null);
  const run = selected("run"), gameId = selected("games");
  try {
    const data = await api(`/api/runs/${encodeURIComponent(run)}/games/${encodeURIComponent(gameId)}`);
    const g = data.game;
    const seats = Array.from({length: g.players}, () => `champion v${g.champion_version}`);
    current = {run: run, game: g, positions: data.positions, seats: seats};
    document.getElementById("game-info").textContent =
      `${g.game_id}: ${g.game} ${JSON.stringify(g.params)}, seed ${g.seed}, ` +
      `${g.decisions} decisions, champion v${g.champion_version}, returns ${g.returns.map(x => fmt(x)).join(", ")}`;
    document.getElementById("replay").hidden = false;
    go(0);
  } catch (err) { showError(err); }
}

async function advise() {
  if (!current) return;
  const p = current.positions[step];
  const think = document.getElementById("think").value || "0";
  const target = document.getElementById("advice");
  target.textContent = "thinking…";
  try {
    const path = `/api/runs/${encodeURIComponent(current.run)}/games/` +
                 `${encodeURIComponent(current.game.game_id)}/advice?step=${p.step}&think=${think}`;
    showAdvice(target, await api(path));
  } catch (err) { target.textContent = ""; showError(err); }
}

async function loadRun() {
  showError(null);
  const run = selected("run");
  const runs = window.runList || [];
  const info = runs.find(r => r.name === run);
  const links = document.getElementById("run-links");
  links.replaceChildren(el("a", {href: `/api/runs/${encodeURIComponent(run)}/ratings`}, "ratings (JSON)"),
    ...info.plots.map(p => el("span", {}, " · ", el("a", {href: `/runs/${encodeURIComponent(run)}/plots/${p}`}, p))));
  try {
    const data = await api(`/api/runs/${encodeURIComponent(run)}/games`);
    const select = document.getElementById("games");
    select.replaceChildren(...data.games.map(g => el("option", {value: g.game_id},
      `${g.game_id} (${g.decisions} decisions)`)));
    await loadRatings(run, info);
  } catch (err) { showError(err); }
}

async function loadRatings(run, info) {
  const data = await api(`/api/runs/${encodeURIComponent(run)}/ratings`);
  const table = document.getElementById("ratings");
  table.replaceChildren(el("tr", {}, ...["version", "objective", "player", "Elo", "95% interval"].map(h => el("th", {}, h))));
  for (const r of data.ratings) {
    table.append(el("tr", {}, el("td", {}, `v${r.version}`), el("td", {}, r.objective || ""),
      el("td", {}, r.player || ""), el("td", {}, Math.round(r.elo)),
      el("td", {}, `${Math.round(r.low)} – ${Math.round(r.high)}`)));
  }
  document.getElementById("plots").replaceChildren(...info.plots.map(p => {
    const href = `/runs/${encodeURIComponent(run)}/plots/${p}`;
    return el("div", {}, el("a", {href: href}, p), el("br"), el("img", {class: "plot", src: href, alt: p}));
  }));
  document.getElementById("ratings-panel").hidden = false;
}

async function init() {
  const data = await api("/api/runs");
  window.runList = data.runs;
  const select = document.getElementById("run");
  select.replaceChildren(...data.runs.map(r => el("option", {value: r.name}, `${r.name} (${r.game})`)));
  if (!data.runs.length) { showError("no runs: start the server with runs=<dir>"); return; }
  select.onchange = loadRun;
  document.getElementById("load").onclick = loadGame;
  document.getElementById("first").onclick = () => go(0);
  document.getElementById("prev").onclick = () => go(step - 1);
  document.getElementById("next").onclick = () => go(step + 1);
  document.getElementById("advise").onclick = advise;
  await loadRun();
}

init().catch(showError);
