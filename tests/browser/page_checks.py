"""What a person would call broken on a rendered page, read from the DOM (plain functions, no pytest).

Each function returns a list of readable findings (empty when the page is clean); the all-pages test
(tests/browser/test_every_page.py) collects them over every page and dataset.
"""

from __future__ import annotations

import re

MIN_FONT_PX = 11  # the smallest chart label a person reads on a projector without leaning in
# A table of more columns is a data grid (one column per system, task or input) that may scroll sideways; a table
# of fewer must show all of them (Reproduce's '± tolerance' and 'why not' were cut off at 1600 px).
MAX_COLUMNS = 10

# Python / pandas / JavaScript values that mean "nothing here" and must never reach a reader: a table cell that
# is one of CELL_LEAK, a sentence with one of TEXT_LEAK ("undefined", "null" are English words in a sentence).
CELL_LEAK = re.compile(r"None|nan|NaN|NaT|<NA>|undefined|null|-?inf|\[\]|\{\}")
TEXT_LEAK = re.compile(r"(?<![\w.])(None|nan|NaN|NaT|<NA>)(?![\w(])")
# English that happens to spell one of them: "None of the metrics ...", "None." as an answer. Everything else
# ("= None", "None%", "(None)", "after None correction") is a leak.
_ENGLISH = re.compile(r"(?<![\w.])None(?= of | of$| is | are | —|\.$)")

_CELLS = """() => {
  const out = [];
  for (const grid of document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]')) {
    const heads = Array.from(grid.querySelectorAll('th')).map(th => th.innerText.trim());
    for (const tr of grid.querySelectorAll('tr')) {
      Array.from(tr.querySelectorAll('td')).forEach((td, k) => out.push([heads[k + 1] || heads[k] || '', td.innerText.trim()]));
    }
  }
  for (const table of document.querySelectorAll('[data-testid="stMain"] table')) {
    if (table.closest('[data-testid="stDataFrame"]')) continue;
    const heads = Array.from(table.querySelectorAll('th')).map(th => th.innerText.trim());
    for (const tr of table.querySelectorAll('tbody tr')) {
      Array.from(tr.querySelectorAll('td, th')).forEach((td, k) => out.push([heads[k] || '', td.innerText.trim()]));
    }
  }
  return out;
}"""


def leaks(page) -> list[str]:
    """``None``/``nan``/... in a table cell or a sentence of the main block."""
    found = [f"table cell {value!r} in column {column!r}" for column, value in page.evaluate(_CELLS)
             if CELL_LEAK.fullmatch(value)]
    text = page.locator('[data-testid="stMain"]').inner_text()
    for line in text.splitlines():
        leak = TEXT_LEAK.search(_ENGLISH.sub("", line))
        if leak:
            found.append(f"text {leak.group(0)!r} in {line.strip()[:160]!r}")
    return sorted(set(found))


_OVERFLOW = """(maxColumns) => {
  const out = [];
  const main = document.querySelector('[data-testid="stMain"]');
  const block = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main || !block) return ['no main block'];
  const name = el => {
    return (el.innerText || el.getAttribute('aria-label') || '').trim().split('\\n')[0].slice(0, 80);
  };
  if (main.scrollWidth > main.clientWidth + 2)
    out.push(`the page scrolls sideways: content ${main.scrollWidth} px wide in a ${main.clientWidth} px window`);
  const right = block.getBoundingClientRect().right + 2;
  for (const el of block.querySelectorAll('[data-testid="stElementContainer"]')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > right) out.push(`element sticks out of the page by ${Math.round(r.right - right)} px: ${name(el)}`);
  }
  for (const grid of block.querySelectorAll('[data-testid="stDataFrame"]')) {
    const heads = Array.from(grid.querySelectorAll('th')).map(th => th.innerText.trim()).filter(Boolean);
    const table = grid.querySelector('[aria-colcount]');  // glide renders only the visible columns' cells
    const columns = table ? parseInt(table.getAttribute('aria-colcount')) : heads.length;
    if (columns > maxColumns) continue;  // a data grid (systems x inputs): scrolling sideways is expected
    if (grid.querySelector('td[aria-readonly="false"]')) continue;  // an editor (What if…): one cell at a time
    for (const s of grid.querySelectorAll('.dvn-scroller')) {
      if (s.scrollWidth > s.clientWidth + 2) {
        out.push(`table columns cut off (${s.scrollWidth} px of columns in ${s.clientWidth} px; columns: ${heads.join(', ').slice(0, 160)})`);
      }
    }
  }
  for (const table of block.querySelectorAll('table')) {
    if (table.closest('[data-testid="stDataFrame"]')) continue;
    const box = table.parentElement;
    if (table.getBoundingClientRect().right > right || box.scrollWidth > box.clientWidth + 2)
      out.push(`table wider than the page: ${name(table)}`);
  }
  for (const el of block.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricLabel"], [data-testid="stMetricDelta"]')) {
    for (const t of [el, ...el.querySelectorAll('*')]) {
      if (t.clientWidth > 0 && t.scrollWidth > t.clientWidth + 2) { out.push(`metric text cut off: ${name(el)}`); break; }
    }
  }
  for (const input of document.querySelectorAll('[data-testid="stSelectbox"] input[role="combobox"]')) {
    if (input.value && input.clientWidth > 0 && input.scrollWidth > input.clientWidth + 2) {  // shown, and cut
      const label = input.closest('[data-testid="stSelectbox"]').querySelector('[data-testid="stWidgetLabel"]');
      out.push(`picker text cut off: '${input.value}' in '${label ? label.innerText.trim() : ''}'`);
    }
  }
  return out;
}"""


def overflow(page, max_columns: int = MAX_COLUMNS) -> list[str]:
    """Text or tables wider than the page: a sideways-scrolling main block, elements past its right edge, columns
    of a table (of at most ``max_columns`` columns) hidden behind a horizontal scroll bar, metric values cut off
    with an ellipsis, a picker (main block or sidebar) whose chosen value does not fit."""
    return sorted(set(page.evaluate(_OVERFLOW, max_columns)))


_FONTS = """(minimum) => {
  const out = [];
  for (const plot of document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')) {
    const layout = plot.layout || {};
    const title = (layout.title && (layout.title.text || layout.title)) || '';
    const small = {};
    for (const t of plot.querySelectorAll('text')) {
      const size = parseFloat(getComputedStyle(t).fontSize);
      const words = (t.textContent || '').trim();
      if (words && size < minimum) small[size] = small[size] || words.slice(0, 30);
    }
    for (const [size, words] of Object.entries(small)) out.push(`${size} px chart text (e.g. '${words}') in '${String(title).slice(0, 80)}'`);
  }
  return out;
}"""


def small_chart_text(page, minimum: float = MIN_FONT_PX) -> list[str]:
    """Chart labels smaller than ``minimum`` px (plotly draws text as SVG, so its computed size is what shows)."""
    return page.evaluate(_FONTS, minimum)


def page_not_found(page) -> list[str]:
    dialogs = page.locator('[role="dialog"]').all_inner_texts()
    return [f"dialog: {d.strip()[:120]}" for d in dialogs if "not found" in d.lower()]


def number(text: str) -> float | None:
    """The first number in ``text`` ('−0.11' with a Unicode minus, '1,234'), or None."""
    found = re.search(r"[-−]?\d[\d,]*(?:\.\d+)?", text or "")
    return float(found.group(0).replace("−", "-").replace(",", "")) if found else None
