"""The @name completion's script (components/common/mention_box.py): anyone's name goes into the page
as data, never as markup or code."""

from __future__ import annotations

import json
import re

from components.common.mention_box import completion_script

HOSTILE = "</script><script>window.owned = 1</script>"


def test_a_name_cannot_close_the_script_nor_be_taken_for_a_placeholder():
    script = completion_script("review.comment.cgt-1", ["Ana", HOSTILE, "LIMITED Ltd", "__KEY__ & co"])
    assert script.count("</script>") == 1 and script.endswith("</script>")
    assert "<script>window" not in script
    people = json.loads(re.search(r"registry\.people\[[^\]]+\] = (\[.*?\]);", script).group(1))
    assert people == ["Ana", HOSTILE, "LIMITED Ltd", "__KEY__ & co"]  # the names as they are, once decoded
    assert 'registry.people["review-comment-cgt-1"]' in script and ".slice(0, 8)" in script
