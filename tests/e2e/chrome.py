"""The English UI's check: the texts a person reads on a page, and those with Russian left in them
once the shop's own data (its knowledge, the visitors' messages, the bot's answers) is taken out."""

from __future__ import annotations

import re

from playwright.sync_api import Page

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)
# Every text a person reads on the page: visible text nodes, the title, placeholders, labels for
# screen readers and tooltips. Elements marked lang="ru" (the switch's «Русский») are Russian on purpose.
VISIBLE_TEXTS = """
(more) => {
  const out = [document.title];
  const skip = '[lang="ru"], script, style, noscript, template' + (more ? ', ' + more : '');
  const shown = (el) => el && !el.closest(skip) && el.getClientRects().length;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.textContent.trim() && shown(node.parentElement)) out.push(node.textContent.trim());
  }
  for (const el of document.querySelectorAll("[placeholder], [title], [aria-label], input[type=submit], option")) {
    if (el.closest(skip) || (el.tagName !== "OPTION" && !el.getClientRects().length)) continue;
    for (const name of ["placeholder", "title", "aria-label"]) {
      if (el.getAttribute(name)) out.push(el.getAttribute(name));
    }
    if (el.tagName === "INPUT") out.push(el.value);
    const select = el.tagName === "OPTION" && el.closest("select");
    if (select && select.getClientRects().length) out.push(el.textContent.trim());
  }
  return out;
}
"""


def russian_chrome(page: Page, data: list[str], *, skip: str = "") -> list[str]:
    """The texts of the page with Cyrillic left once the shop's own data is taken out of them;
    `skip`: a CSS selector of regions that show the shop's data as they are (an answer, a passage)."""
    found = []
    for text in page.evaluate(VISIBLE_TEXTS, skip):
        if text.endswith("…") and any(text[:-1].strip() in value for value in data):
            continue  # a preview: the start of a message or an entry
        rest = text
        for value in data:
            rest = rest.replace(value, "")
        if CYRILLIC.search(rest):
            found.append(text)
    return found
