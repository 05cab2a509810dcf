#!/usr/bin/env python3
# html_dom.py - what a person sees in an HTML report, from the DOM that Chromium
# rendered (chromium --dump-dom), as plain lines the shell tests grep:
#   sum-ID=TEXT                 every summary value (sum-blocks=13 ...)
#   stack N: BYTES BLOCKS | FRAME | FRAME ...   the rows of the stacks table
#   fg CLASSES: LABEL           every icicle box drawn (its text, or data-label)
#   ID=TEXT                     text of elements with the ids in TEXT_IDS
#   section ID: LINE            the text lines of the corruption and lost sections
#                               (a table row is one line, cells joined by " | ")
#   attr NAME=VALUE             the html element's data- attributes
# Usage: python3 tests/html_dom.py DOM.html
import sys
from html.parser import HTMLParser

TEXT_IDS = ("tl-peak", "tl-peak-label", "fg-pruned", "stacks-rest", "fg-zoom", "fg-match")
BLOCK = {"div", "p", "tr", "h2", "section", "table", "td", "th"}
VOID = {"meta", "input", "br", "img", "link", "hr", "circle", "line", "path"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.kids = []

    def text(self):
        return "".join(k if isinstance(k, str) else k.text() for k in self.kids)

    def lines(self):
        """Text split at block elements, one line per block."""
        out, cur = [], []

        def walk(n):
            for k in n.kids:
                if isinstance(k, str):
                    cur.append(k)
                elif k.tag == "tr":
                    flush()
                    cells = [c for c in k.kids if not isinstance(c, str)]
                    out.append(" | ".join(" | ".join(c.lines()) for c in cells))
                elif k.tag in BLOCK:
                    flush()
                    walk(k)
                    flush()
                else:
                    walk(k)

        def flush():
            s = "".join(cur).strip()
            if s:
                out.append(s)
            cur.clear()

        walk(self)
        flush()
        return out


class Tree(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#doc", [], None)
        self.cur = self.root
        self.html_attrs = {}

    def handle_starttag(self, tag, attrs):
        if tag == "html":
            self.html_attrs = dict(attrs)
        n = Node(tag, attrs, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.kids.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        if self.cur.tag not in ("script", "style"):
            self.cur.kids.append(data)


def walk(n):
    yield n
    for k in n.kids:
        if not isinstance(k, str):
            yield from walk(k)


def main():
    t = Tree()
    t.feed(open(sys.argv[1], encoding="utf-8").read())
    for k, v in sorted(t.html_attrs.items()):
        if k.startswith("data-"):
            print("attr %s=%s" % (k, v))
    for n in walk(t.root):
        i = n.attrs.get("id", "")
        cls = n.attrs.get("class", "") or ""
        if i.startswith("sum-"):
            print("%s=%s" % (i, n.text()))
        elif i in TEXT_IDS:
            print("%s=%s" % (i, n.text()))
        elif i.startswith("stack-") and n.tag == "tr":
            tds = [k for k in n.kids if not isinstance(k, str) and k.tag == "td"]
            frames = [ln for ln in tds[5].lines()] if len(tds) > 5 else []
            print("stack %s: %s %s | %s" % (i[6:], tds[1].text(), tds[3].text(), " | ".join(frames)))
        elif i in ("corruption", "lost"):
            for ln in n.lines():
                print("section %s: %s" % (i, ln))
        elif n.tag == "div" and cls.split()[:1] == ["fg"]:
            print("fg %s: %s" % (cls, n.text() or n.attrs.get("data-label", "")))


main()
