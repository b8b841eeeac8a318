"""Draw ``docs/terminal.png``: a screen of ``omega-cluster play`` as a person sees it.

Runs the terminal table in tmux (120 × 46), plays one move, asks the advisor (``?``), captures
the screen with its colours (``capture-pane -e``) and draws it with Pillow in DejaVu Sans Mono,
each run of text in its terminal colour (rich parses the escape codes)::

    PYTHONPATH=$PWD python scripts/terminal_png.py [out.png]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont
from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
COLS, ROWS = 120, 46
COMMAND = (f"{sys.executable} -m omega_cluster play game=mexican_train players=4 "
           "seats=you,commander,commander,lieutenant rounds=1 seed=2")  # fmt: skip
BACKGROUND, FOREGROUND = (24, 26, 33), (220, 220, 220)


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True).stdout


def capture() -> str:
    """Run the table, play a move, open the advisor; the screen with its escape codes."""
    name = f"omega-png-{os.getpid()}"
    shell = f"cd {ROOT} && PYTHONPATH={ROOT} FORCE_COLOR=1 {COMMAND}; sleep 60"
    tmux("new-session", "-d", "-s", name, "-x", str(COLS), "-y", str(ROWS), shell)
    try:
        for line, wait in (("", "seat 0> "), ("0", "seat 0> "), ("?", "why: ")):
            if line:
                tmux("send-keys", "-t", name, "-l", line)
                tmux("send-keys", "-t", name, "Enter")
            for _ in range(600):
                time.sleep(0.1)
                screen = tmux("capture-pane", "-p", "-t", name)
                if screen.rstrip().endswith("seat 0>") and (wait in screen):
                    break
        time.sleep(0.3)
        return tmux("capture-pane", "-p", "-e", "-t", name)
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], check=False)


def draw(screen: str, out: Path) -> None:
    """The captured screen as a PNG: each character in its colour, bold where it is bold."""
    font = ImageFont.truetype(FONT, 15)
    bold = ImageFont.truetype(FONT.replace("Mono.ttf", "Mono-Bold.ttf"), 15)
    width, height = font.getbbox("M")[2], 19
    image = Image.new("RGB", (COLS * width + 24, ROWS * height + 24), BACKGROUND)
    pen = ImageDraw.Draw(image)
    console = Console()
    # one parse for the whole screen: tmux carries a style over the line ends
    for row, text in enumerate(Text.from_ansi(screen).split("\n")[:ROWS]):
        for col, char in enumerate(text.plain):
            style = text.get_style_at_offset(console, col)
            color = FOREGROUND
            if style.color is not None and not style.color.is_default:
                color = tuple(style.color.get_truecolor())
            face = bold if style.bold else font
            pen.text((12 + col * width, 12 + row * height), char, font=face, fill=color)
    image.save(out)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "terminal.png"
    draw(capture(), target)
    print(f"wrote {target}")
