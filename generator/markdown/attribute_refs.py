"""A prose reference in an image's alt text, a link's title (`![… {{ a.layer }}](x)`) or an
attribute set with attr_list (`{: title="{{ a.head }}" }`, which is why this runs after it): an
attribute holds text, not the reference's markup, so it gets the number as plain text (the markup
there would end the attribute and break the tag). One whose number is pending in this build is
refused at its line: an attribute cannot hold the pending note."""

from __future__ import annotations

import html
import re

from markdown.treeprocessors import Treeprocessor

from .build_errors import CourseBuildError

TAG_RE = re.compile(r"<[^>]+>")


class AttributeRefs(Treeprocessor):
    """Fills each reference placeholder in an element's attributes with its plain text (the
    extension's state.ref_text: placeholder -> (its HTML or None when pending, "path:line"))."""

    def __init__(self, md, ext):
        super().__init__(md)
        self.ext = ext

    def run(self, root):
        held = self.ext.state.ref_text
        if not held:
            return None
        for el in root.iter():
            for name, value in el.items():
                if "\x02" not in value:
                    continue
                for placeholder, (markup, where) in held.items():
                    if placeholder not in value:
                        continue
                    if markup is None:
                        raise CourseBuildError(where, f"a reference in the {name!r} of an <{el.tag}> has no number in this build "
                                               "(its traces are pending), and an attribute cannot hold the pending note",
                                               "write the reference in the page's text")
                    value = value.replace(placeholder, html.unescape(TAG_RE.sub("", markup)))
                el.set(name, value)
        return None
