"""What a page must not show, measured in the page itself (Playwright's `page.evaluate`), not judged by
eye: content wider than its box or sticking out of it, the page scrolling sideways, raw values (visitor
ids, a dot in a Russian decimal, internal codes), a number with the wrong form of its noun, and the
admin's undeclined phrases. Each check returns what it found as readable lines; [] is a clean page."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from playwright.sync_api import Page

# Boxes whose content is wider than they are, or elements that stick out of the nearest box around
# them (a border, a background or clipping makes a box). What may scroll sideways (overflow auto or
# scroll) or is cut with an ellipsis on purpose is left alone, and so is everything inside it; form
# fields scroll their own text. Only the innermost offender is named: its ancestors overflow with it.
OVERFLOW_JS: Final = """
() => {
  const found = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth + 1) {
    const what = `the page scrolls sideways: ${root.scrollWidth} px wide in a ${root.clientWidth} px window`;
    found.push({el: null, what});
  }
  const skipTags = new Set(['INPUT', 'TEXTAREA', 'SELECT', 'OPTION', 'SCRIPT', 'STYLE', 'CANVAS', 'IMG', 'SVG',
                            'IFRAME', 'BR', 'NOSCRIPT', 'TEMPLATE', 'PROGRESS', 'METER']);
  const scrolls = (style) => style.overflowX === 'auto' || style.overflowX === 'scroll';
  const clips = (style) => style.overflowX !== 'visible';
  const transparent = (color) => color === 'transparent' || /^rgba\\(.*,\\s*0\\)$/.test(color);
  const isBox = (style) => clips(style) || parseFloat(style.borderRightWidth) > 0
    || parseFloat(style.borderLeftWidth) > 0 || !transparent(style.backgroundColor);
  // Per element, with its ancestors': hidden for the eye but read aloud (Django's .visually-hidden, our
  // .sr) or moved off screen (a skip link); inside something that scrolls or cuts with an ellipsis on
  // purpose (its own overflow is measured on it, not on its content). Memoised: one pass up the tree.
  const memo = new Map();
  const flags = (el) => {
    if (!el || el === document.body) return {concealed: false, scrolling: false};
    if (memo.has(el)) return memo.get(el);
    const up = flags(el.parentElement), style = getComputedStyle(el), rect = el.getBoundingClientRect();
    const off = (style.position === 'absolute' || style.position === 'fixed') && (rect.right <= 0 || rect.width <= 1);
    const clipped = style.clip !== 'auto' || style.clipPath !== 'none' || style.visibility === 'hidden';
    const own = {
      concealed: up.concealed || off || clipped,
      scrolling: up.scrolling || scrolls(style) || style.textOverflow === 'ellipsis',
    };
    memo.set(el, own);
    return own;
  };
  // Laid out beside its parent on purpose with a negative margin (the admin's «Recent actions» column).
  const placedOutside = (style) => parseFloat(style.marginRight) < 0 || parseFloat(style.marginLeft) < 0;
  const name = (el) => {
    let s = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
    if (typeof el.className === 'string' && el.className.trim()) s += '.' + el.className.trim().split(/\\s+/).join('.');
    const text = (el.innerText || '').trim().replace(/\\s+/g, ' ').slice(0, 60);
    return text ? `${s} «${text}»` : s;
  };
  for (const el of document.body.querySelectorAll('*')) {
    if (skipTags.has(el.tagName.toUpperCase()) || !el.getClientRects().length) continue;
    // Laid out but not shown: the inside of a closed <details> (content-visibility: hidden in Chromium).
    if (!el.checkVisibility({contentVisibilityAuto: true, visibilityProperty: true})) continue;
    const style = getComputedStyle(el);
    const rect = el.getBoundingClientRect();
    if (flags(el).concealed || flags(el.parentElement).scrolling) continue;
    if (placedOutside(style)) continue;
    if (!scrolls(style) && style.textOverflow !== 'ellipsis' && el.clientWidth > 2
        && el.scrollWidth > el.clientWidth + 1 && style.display !== 'inline'
        && ![...el.children].some((child) => placedOutside(getComputedStyle(child)))) {
      const right = (e) => e.getBoundingClientRect().right;
      const widest = [...el.children].sort((a, b) => right(b) - right(a))[0];
      const by = widest && right(widest) > rect.right ? ` (${name(widest)})` : '';
      found.push({el, what: `${name(el)}: content ${el.scrollWidth} px wide in a ${el.clientWidth} px box${by}`});
      continue;
    }
    let box = el.parentElement;
    while (box && box !== document.body && !isBox(getComputedStyle(box))) box = box.parentElement;
    if (!box || box === document.body || style.position === 'fixed') continue;
    const outer = box.getBoundingClientRect();
    const over = Math.max(rect.right - outer.right, outer.left - rect.left);
    if (over > 1) found.push({el, what: `${name(el)}: ${Math.round(over)} px outside ${name(box)}`});
  }
  // The innermost offenders only.
  return found.filter((f) => !f.el || !found.some((g) => g !== f && g.el && f.el.contains(g.el))).map((f) => f.what);
}
"""

# Text a person reads, line by line as the browser lays it out (innerText: what is shown), plus each
# stat card read as one phrase (its number and its label are two blocks: «4» over «разговоров»).
LINES_JS: Final = """
(skip) => {
  const lines = [];
  const clean = (t) => t.replace(/[\\u00a0\\u202f]/g, ' ').split(/[\\n\\t]+/)
    .map((l) => l.replace(/ +/g, ' ').trim()).filter(Boolean);
  lines.push(...clean(document.body.innerText));
  for (const el of document.querySelectorAll('.stat')) {
    if (el.getClientRects().length) lines.push(el.innerText.replace(/\\s+/g, ' ').trim());
  }
  for (const el of document.querySelectorAll('option, [placeholder], [title], [aria-label], input[type=submit]')) {
    if (el.closest(skip)) continue;
    for (const attr of ['placeholder', 'title', 'aria-label']) {
      if (el.getAttribute(attr)) lines.push(el.getAttribute(attr));
    }
    if (el.tagName === 'OPTION') lines.push(el.textContent.trim());
    if (el.tagName === 'INPUT') lines.push(el.value);
  }
  return lines;
}
"""
# Where code is shown as code (the widget's snippet, an API key) or what a visitor wrote as it is.
AS_IS: Final = "pre, code, kbd, samp, textarea"
CODE_TEXT_JS: Final = """
(selector) => [...document.querySelectorAll(selector)].map((el) => el.innerText || el.value || '').filter(Boolean)
"""

URL = re.compile(r"(?:https?://|www\.)\S+|\b[\w.-]+@[\w.-]+\.\w+|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\S*")
VISITOR_ID = re.compile(r"\bv_[0-9a-f]{6,}")
RU_DECIMAL = re.compile(r"(?<![\d.,])\d+\.\d+(?![\d.]*\d)(?!\.\d)")
CODES = re.compile(r"\b(?:(?:None|True|False)(?! [a-z])|null|undefined|NaN|[a-z]+_[a-z_]+)\b")
# Latin words of the code inside Russian text (a filter's «команда correct»). A dotted name (an event a
# webhook receives, «handoff.waiting») is a protocol's word, shown as such.
RU_CODES = re.compile(
    r"(?<![\w.])(?:correct|incorrect|wrong|edit|answered|pending|open|closed|hidden|lead|handoff)(?![\w.])"
)
MONTHS_CAPITALISED = re.compile(
    r"(?<=[\w,:] )(?:\d{1,2} )?(?:Январ[ья]|Феврал[ья]|Марта?|Апрел[ья]|Ма[йя]|Июн[ья]|Июл[ья]|Августа?|Сентябр[ья]|"
    r"Октябр[ья]|Ноябр[ья]|Декабр[ья]|Янв|Фев|Мар|Апр|Июн|Июл|Авг|Сен|Окт|Ноя|Дек)\b\.?"
)
ADMIN_PHRASES = re.compile(
    r"(?:Выберите|Просмотреть|Изменить|Добавить|Удалить) (?:поправка|запись|страница|ссылка)\b"
    r"|Добавить ещ[её] (?:один|одну|одно) [А-ЯЁ]"
)

# Russian nouns the pages count: (one, few, many) and the nominative plural, never right after a number.
RU_NOUNS: Final = {
    "разговор": ("разговор", "разговора", "разговоров", "разговоры"),
    "ответ": ("ответ", "ответа", "ответов", "ответы"),
    "вопрос": ("вопрос", "вопроса", "вопросов", "вопросы"),
    "запись": ("запись", "записи", "записей", ""),
    "страница": ("страница", "страницы", "страниц", ""),
    "контакт": ("контакт", "контакта", "контактов", "контакты"),
    "оператор": ("оператор", "оператора", "операторов", "операторы"),
    "поправка": ("поправка", "поправки", "поправок", ""),
    "посетитель": ("посетитель", "посетителя", "посетителей", "посетители"),
    "вызов": ("вызов", "вызова", "вызовов", "вызовы"),
    "участник": ("участник", "участника", "участников", "участники"),
    "фрагмент": ("фрагмент", "фрагмента", "фрагментов", "фрагменты"),
}
EN_NOUNS: Final = ("conversation", "answer", "question", "entry", "page", "contact", "operator", "correction",
                   "visitor", "call", "member", "passage", "day")
RU_COUNTED = re.compile(r"(?<![\d.,])(\d+) (" + "|".join(
    sorted({form for forms in RU_NOUNS.values() for form in forms if form}, key=len, reverse=True)) + r")\b")
EN_COUNTED = re.compile(r"(?<![\d.,])(\d+) (" + "|".join(
    f"{noun}|{noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}" for noun in EN_NOUNS) + r")\b")


def ru_form(number: int) -> int:
    """Which of Russian's three counted forms a number takes: 0 one (21 разговор), 1 few (22
    разговора), 2 many (25 разговоров, 11 разговоров)."""
    if number % 10 == 1 and number % 100 != 11:
        return 0
    if 2 <= number % 10 <= 4 and not 12 <= number % 100 <= 14:
        return 1
    return 2


def plural_slips(line: str, language: str) -> list[str]:
    found = []
    if language == "ru":
        for number, word in RU_COUNTED.findall(line):
            forms = next(f for f in RU_NOUNS.values() if word in f)
            if word != forms[ru_form(int(number))]:
                found.append(f"«{number} {word}» (should be «{number} {forms[ru_form(int(number))]}»)")
    else:
        for number, word in EN_COUNTED.findall(line):
            singular = word in EN_NOUNS
            if singular != (int(number) == 1):
                found.append(f"«{number} {word}»")
    return found


def overflow(page: Page) -> list[str]:
    return list(page.evaluate(OVERFLOW_JS))


def words(page: Page, language: str, *, data: Sequence[str] = ()) -> list[str]:
    """Raw values, plural and case slips in the page's text; `data`: the shop's own texts (what a
    visitor wrote, the knowledge's passages), taken out first."""
    code = list(page.evaluate(CODE_TEXT_JS, AS_IS))
    found = []
    for raw in dict.fromkeys(page.evaluate(LINES_JS, AS_IS)):
        line = raw
        for value in [*data, *code]:
            if value and value in line:
                line = line.replace(value, " ")
        line = URL.sub(" ", line)
        problems = [f"visitor id {m}" for m in VISITOR_ID.findall(line)]
        problems += [f"code «{m}»" for m in CODES.findall(line)]
        problems += plural_slips(line, language)
        if language == "ru":
            problems += [f"code «{m}»" for m in RU_CODES.findall(line)]
            problems += [f"decimal with a dot «{m}»" for m in RU_DECIMAL.findall(line)]
            problems += [f"capitalised month «{m.strip()}»" for m in MONTHS_CAPITALISED.findall(line)]
            problems += [f"admin phrase «{m}»" for m in ADMIN_PHRASES.findall(line)]
        found += [f"{problem} in «{raw[:120]}»" for problem in problems]
    return found
