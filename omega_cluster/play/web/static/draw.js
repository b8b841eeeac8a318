// Drawing a position, shared by the table and the game viewer: drawPosition(view, options).
//
// The server sends a seat's view as JSON (play/session.py: the game's seat_view hook); this file
// only draws it, by the view's kind:
//   "dominoes"  Mexican Train: the engine, each train a row of tiles (already turned to match
//               by the game's own layout, from the engine outwards), markers, open doubles, the
//               boneyard, and the hand; a hand tile lights the trains it can go on.
//   "cards"     a card game (games/picture.py): rows of cards, face up or down, a card that is a
//               move (a Goofspiel bid) clickable; the public history and a few facts.
//   otherwise   the generic view: the board text of a game without hidden information, the
//               observation's fields.
// Every move that is not a tile or a card is a button under the drawing (draw, pass, bet, ...).
//
// options: {legal: [[number, action, name]] (the moves that may be played now: none in the
// viewer), onMove(number), played: the action recorded at this position (the viewer), seats:
// the player specs by seat, mine: the seat whose view this is, you: whether a person sits there}.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

function svgText(x, y, text, attrs) {
  return svg("text", {x: x, y: y, ...(attrs || {})}, text);
}

// -- dominoes --------------------------------------------------------------------------------
const HALF = 26;          // a tile's half is a HALF x HALF square
const GAP = 3;            // between tiles on a train
const ROW_H = 62;         // one train's row
const LABEL_W = 178;      // the owner's label left of the engine
const TRAIN_TILES = 10;   // the newest tiles of a long train; "+k" before them
// pip colours by value, as double-12 sets colour them
const PIP_COLOURS = ["#000", "#3a8fd6", "#2e8b57", "#d0342c", "#7b4a21", "#1f4fa8", "#c79a00",
                     "#7d3c98", "#14365e", "#556b2f", "#c2185b", "#00838f", "#5d4037"];
const A = 0.25, B = 0.5, C = 0.75;
const XS = [0.22, 0.5, 0.78], YS = [0.18, 0.39, 0.61, 0.82];
const PIPS = [
  [], [[B, B]], [[A, A], [C, C]], [[A, A], [B, B], [C, C]],
  [[A, A], [C, A], [A, C], [C, C]], [[A, A], [C, A], [B, B], [A, C], [C, C]],
  [[A, A], [A, B], [A, C], [C, A], [C, B], [C, C]],
  [[A, A], [A, B], [A, C], [C, A], [C, B], [C, C], [B, B]],
  [[A, A], [A, B], [A, C], [C, A], [C, B], [C, C], [B, A], [B, C]],
  [[A, A], [A, B], [A, C], [C, A], [C, B], [C, C], [B, A], [B, C], [B, B]],
  [...[0, 2].flatMap(i => YS.map(y => [XS[i], y])), [B, YS[1]], [B, YS[2]]],
  [...[0, 2].flatMap(i => YS.map(y => [XS[i], y])), [B, YS[0]], [B, B], [B, YS[3]]],
  [0, 1, 2].flatMap(i => YS.map(y => [XS[i], y])),
];

function pips(value, x, y, size) {
  const group = svg("g", {});
  const layout = PIPS[value] || [];
  const r = size * (value > 9 ? 0.075 : 0.09);
  for (const [px, py] of layout) {
    group.append(svg("circle", {cx: x + px * size, cy: y + py * size, r: r,
                                fill: PIP_COLOURS[value] || "#000"}));
  }
  if (!PIPS[value]) group.append(svgText(x + size / 2, y + size * 0.68, String(value),
                                         {"text-anchor": "middle", "font-size": size * 0.5}));
  return group;
}

// A tile a|b at (x, y): across (a left, b right) or upright (a on top); size: its half's side.
function tile(a, b, x, y, upright, size, cls) {
  const w = upright ? size : 2 * size, h = upright ? 2 * size : size;
  const g = svg("g", {class: "tile " + (cls || ""), "data-tile": `${a}|${b}`});
  g.append(svg("title", {}, `${a}|${b}`));
  g.append(svg("rect", {x: x, y: y, width: w, height: h, rx: size * 0.16, class: "face"}));
  g.append(upright
    ? svg("line", {x1: x + 3, y1: y + size, x2: x + size - 3, y2: y + size, class: "divider"})
    : svg("line", {x1: x + size, y1: y + 3, x2: x + size, y2: y + size - 3, class: "divider"}));
  g.append(pips(a, x, y, size));
  g.append(upright ? pips(b, x, y + size, size) : pips(b, x + size, y, size));
  return g;
}

function split(name) {
  return name.split("|").map(Number);
}

function seatLabel(seat, options) {
  const spec = (options.seats || [])[seat];
  if (seat === options.mine && options.you) return `seat ${seat} · you`;
  return spec ? `seat ${seat} · ${spec}` : `seat ${seat}`;
}

// the moves of the legal list that lay a tile: {number, action, tile, train}
function tilePlays(view, options) {
  const byAction = new Map((view.plays || []).map(p => [p.action, p]));
  const out = [];
  for (const [number, action] of options.legal || []) {
    const play = byAction.get(action);
    if (play) out.push({number: number, action: action, tile: play.tile, train: play.train});
  }
  return out;
}

function drawDominoes(view, options) {
  const plays = tilePlays(view, options);
  const played = (view.plays || []).find(p => p.action === options.played) || null;
  const trains = view.trains;
  const engineX = LABEL_W, engineW = HALF + 8;
  const startX = engineX + engineW + 34;
  const width = startX + (TRAIN_TILES + 1.4) * (2 * HALF + GAP) + 30;
  const height = trains.length * ROW_H + 8;
  const board = svg("svg", {id: "board-svg", class: "dominoes", viewBox: `0 0 ${width} ${height}`,
                            width: width, role: "img", "aria-label": "the trains"});
  board.append(svg("rect", {x: 0, y: 0, width: width, height: height, rx: 10, class: "felt"}));
  // the engine: an upright double at the hub the trains leave from
  const hubY = height / 2;
  const engine = tile(view.engine, view.engine, engineX + 4, hubY - HALF * 1.1, true, HALF * 1.1,
                      "engine");
  trains.forEach((train, i) => {
    const y = 4 + i * ROW_H, mid = y + ROW_H / 2;
    const row = svg("g", {class: "train" + (train.slot === options.mine ? " mine" : ""),
                          "data-train": train.slot});
    const acting = train.slot === view.current;
    const name = train.owner === "Mexican" ? "Mexican train" : seatLabel(train.slot, options);
    row.append(svgText(14, mid - 4, name, {class: "owner" + (acting ? " acting" : "")}));
    if (acting) row.append(svg("polygon", {points: `3,${mid - 13} 10,${mid - 8} 3,${mid - 3}`,
                                           class: "to-act"}));
    const notes = [];
    if (train.owner !== "Mexican") notes.push(`${view.hand_sizes[train.slot]} in hand`);
    row.append(svgText(14, mid + 14, notes.join(" "), {class: "note-text"}));
    if (train.marker) {  // the owner's marker: a flag beside the hand size
      const mx = 100;
      row.append(svg("g", {class: "marker"},
        svg("title", {}, "marker up: anyone may play on this train"),
        svg("line", {x1: mx, y1: mid + 18, x2: mx, y2: mid + 2}),
        svg("polygon", {points: `${mx},${mid + 2} ${mx + 13},${mid + 6} ${mx},${mid + 10}`}),
        svgText(mx + 16, mid + 14, "marker up")));
    }
    row.append(svg("path", {d: `M ${engineX + engineW} ${hubY} C ${startX - 20} ${hubY}, ` +
                                `${startX - 30} ${mid}, ${startX - 4} ${mid}`, class: "hub"}));
    let x = startX;
    const names = train.tiles;
    const shown = names.slice(-TRAIN_TILES);
    if (shown.length < names.length) {
      row.append(svgText(x - 2, mid + 5, `+${names.length - shown.length}`, {class: "more"}));
      x += 22;
    }
    shown.forEach((nameOf, k) => {
      const [a, b] = split(nameOf);
      const last = k === shown.length - 1;
      const upright = a === b;  // a double lies across its train
      const openDouble = last && train.open_double;
      const t = tile(a, b, x, upright ? mid - HALF : mid - HALF / 2, upright, HALF,
                     "laid" + (openDouble ? " open-double" : ""));
      row.append(t);
      x += (upright ? HALF : 2 * HALF) + GAP;
    });
    if (train.open_double) {
      row.append(svgText(x + 2, y + 12, "open double: cover it", {class: "warn-text"}));
    }
    // where a tile goes next on this train: lit when the picked tile can go there
    const slot = svg("g", {class: "slot", "data-train": train.slot},
      svg("rect", {x: x + 2, y: mid - HALF / 2, width: 2 * HALF, height: HALF, rx: 4}),
      svgText(x + 2 + HALF, mid + 5, String(train.open_end), {"text-anchor": "middle"}));
    if (played && played.train === train.slot) slot.classList.add("played");
    row.append(slot);
    board.append(row);
  });
  board.append(engine);

  const hand = svg("svg", {id: "hand-svg", class: "hand",
                           viewBox: `0 0 ${width} ${2.6 * HALF + 26}`, width: width});
  const size = HALF * 1.15;
  hand.append(svgText(8, 20, options.you ? "your hand" : `seat ${options.mine}'s hand`,
                      {class: "owner"}));
  const selection = {tile: null};
  const tiles = [];
  view.hand.forEach((nameOf, k) => {
    const [a, b] = split(nameOf);
    const mine = plays.filter(p => p.tile === nameOf);
    const cls = "hand-tile" + (mine.length ? " playable" : (plays.length ? " idle" : "")) +
                (played && played.tile === nameOf ? " played" : "");
    const t = tile(a, b, 12 + k * (size + 10), 30, true, size, cls);
    if (mine.length) t.addEventListener("click", () => pick(nameOf, mine));
    tiles.push(t);
    hand.append(t);
  });
  // the boneyard: a face-down stack and its count
  const bx = width - 130;
  for (let k = 2; k >= 0; k--) {
    hand.append(svg("rect", {x: bx + 4 * k, y: 34 - 3 * k, width: size, height: 2 * size, rx: 4,
                             class: "bone-back"}));
  }
  hand.append(svgText(bx + size + 16, 60, `boneyard`, {class: "note-text"}));
  hand.append(svgText(bx + size + 16, 80, String(view.boneyard), {class: "count", id: "boneyard"}));

  function light(nameOf, mine) {
    selection.tile = nameOf;
    for (const t of tiles) t.classList.toggle("selected", t.dataset.tile === nameOf);
    for (const s of board.querySelectorAll(".slot")) {
      const dest = mine.find(p => String(p.train) === s.dataset.train);
      s.classList.toggle("lit", Boolean(dest));
      s.onclick = dest ? () => options.onMove(dest.number) : null;
    }
  }
  function pick(nameOf, mine) {
    if (mine.length === 1) options.onMove(mine[0].number);  // one place to go: played at once
    else light(nameOf, mine);
  }

  const facts = el("div", {class: "facts"},
    el("span", {}, `round ${view.round} of ${view.rounds}`),
    el("span", {}, `engine ${view.engine}|${view.engine}`),
    el("span", {}, "pips so far " + view.scores.map((s, i) => `seat ${i}: ${s}`).join(", ")));
  if (view.must_cover) facts.append(el("span", {class: "warn"}, "an open double must be covered"));
  if (view.chain) facts.append(el("span", {}, "first turn: keep laying on your train, or pass"));
  const hint = plays.length
    ? el("div", {class: "hint"}, "pick a lit tile; where it can go lights up (one place: it is played)")
    : el("div", {class: "hint"});
  return el("div", {class: "position dominoes-view"}, facts, board, hand, hint);
}

// -- cards -----------------------------------------------------------------------------------
function cardFace(card, cls) {
  if (card.face === null) return el("div", {class: "card back " + (cls || ""), title: "face down"});
  const red = /[♥♦]/.test(card.face);
  return el("div", {class: "card " + (red ? "red " : "") + (cls || ""), "data-face": card.face},
            el("span", {class: "corner"}, card.face), el("span", {class: "pip"}, card.face));
}

function drawCards(view, options) {
  const numbers = new Map((options.legal || []).map(([number, action]) => [action, number]));
  const out = el("div", {class: "position cards-view"});
  for (const row of view.rows) {
    const who = row.seat === null || row.seat === undefined ? row.label
      : row.label.replace(`seat ${row.seat}`, seatLabel(row.seat, options));
    const cards = el("div", {class: "card-row"});
    for (const card of row.cards) {
      const number = card.action === null ? undefined : numbers.get(card.action);
      const cls = (number !== undefined ? "playable" : "") +
                  (card.action !== null && card.action === options.played ? " played" : "");
      const face = cardFace(card, cls);
      if (number !== undefined) {
        face.setAttribute("data-move", number);
        face.onclick = () => options.onMove(number);
      }
      cards.append(face);
    }
    if (!row.cards.length) cards.append(el("span", {class: "note"}, "—"));
    out.append(el("div", {class: "row" + (row.seat === options.mine ? " mine" : "")},
                  el("div", {class: "row-label"}, who), cards));
  }
  const history = el("div", {class: "history"}, el("span", {class: "row-label"}, "so far"));
  for (const h of view.history) history.append(el("span", {class: "chip"}, h));
  if (!view.history.length) history.append(el("span", {class: "note"}, "nothing yet"));
  out.append(history);
  for (const [key, value] of view.facts) {
    out.append(el("div", {class: "fact"}, el("span", {class: "row-label"}, key), String(value)));
  }
  return out;
}

// -- any other game --------------------------------------------------------------------------
function drawGeneric(view) {
  const out = el("div", {class: "position generic-view"});
  if (view.board) out.append(el("pre", {class: "board"}, view.board));
  const fields = el("dl", {});
  for (const [key, value] of Object.entries(view.observation || {})) {
    fields.append(el("dt", {}, key), el("dd", {}, typeof value === "string" ? value
                                                                           : JSON.stringify(value)));
  }
  out.append(fields);
  return out;
}

// the moves the drawing does not hold (draw, pass, bets ...) as buttons
function moveButtons(view, options) {
  const drawn = new Set();
  if (view.kind === "dominoes") for (const p of view.plays || []) drawn.add(p.action);
  if (view.kind === "cards") {
    for (const row of view.rows) for (const c of row.cards) if (c.action !== null) drawn.add(c.action);
  }
  const box = el("div", {id: "moves"});
  for (const [number, action, name] of options.legal || []) {
    if (drawn.has(action)) continue;
    box.append(el("button", {class: "move", type: "button", "data-move": number,
                             onclick: () => options.onMove(number)}, name));
  }
  return box;
}

function drawPosition(view, options) {
  const opts = {legal: [], onMove: () => {}, played: null, seats: [], ...options};
  const drawing = view.kind === "dominoes" ? drawDominoes(view, opts)
    : view.kind === "cards" ? drawCards(view, opts) : drawGeneric(view);
  return el("div", {class: "drawing"}, drawing, moveButtons(view, opts));
}
