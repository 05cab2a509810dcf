#!/usr/bin/env python3
"""svgtitles.py FILE - parse an SVG flame graph with xml.etree (exits 1 when it is
not well-formed XML or not SVG) and print one line per frame box: its rect's x and
width and its <title> text, "X WIDTH TITLE", in document order; then the free
<text> notes (outside the boxes) as "note TEXT"."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    sys.stderr.write("svgtitles.py: %s: %s\n" % (sys.argv[1], e))
    sys.exit(1)
if root.tag != NS + "svg":
    sys.stderr.write("svgtitles.py: root element is %s, not svg\n" % root.tag)
    sys.exit(1)
for g in root.iter(NS + "g"):
    t, r = g.find(NS + "title"), g.find(NS + "rect")
    if t is None or r is None:
        continue
    print(r.get("x"), r.get("width"), t.text)
for el in root.findall(NS + "text"):
    print("note", "".join(el.itertext()))
