import pytest

from coder import HtmlExtractionError, extract_html

DOC = "<!DOCTYPE html>\n<html><head><title>x</title></head><body><p>hi</p></body></html>"


def test_fenced_html_block_with_language_is_extracted_without_fences():
    assert extract_html(f"```html\n{DOC}\n```") == DOC + "\n"


def test_fenced_block_without_language_is_extracted():
    assert extract_html(f"```\n{DOC}\n```") == DOC + "\n"


def test_chatter_before_and_after_the_fence_is_dropped():
    reply = f"Sure! Here is the app you asked for.\n\n```html\n{DOC}\n```\n\nIt uses no libraries. Enjoy!"
    assert extract_html(reply) == DOC + "\n"


def test_unfenced_document_inside_chatter_is_cut_to_doctype_and_closing_tag():
    assert extract_html(f"Here you go:\n{DOC}\nThat's all.") == DOC + "\n"


def test_of_several_blocks_the_one_holding_html_is_taken():
    reply = f"First the CSS:\n```css\nbody {{ margin: 0; }}\n```\nThen the file:\n```html\n{DOC}\n```\nand a test:\n```js\nconsole.log(1)\n```"
    assert extract_html(reply) == DOC + "\n"


def test_fences_inside_the_document_do_not_split_it():
    doc = "<!DOCTYPE html>\n<html><body><script>\nconst md = `\n```js\nx\n```\n`;\n</script></body></html>"
    assert extract_html(f"```html\n{doc}\n```") == doc + "\n"


def test_reply_cut_off_before_closing_tag_is_reported_as_truncated():
    with pytest.raises(HtmlExtractionError) as caught:
        extract_html("```html\n<!DOCTYPE html>\n<html><body><p>half a fi", model="gpt-x")
    assert caught.value.truncated
    assert "gpt-x" in str(caught.value) and "cut off" in str(caught.value)


def test_finish_reason_length_counts_as_truncated_even_with_a_closing_tag():
    with pytest.raises(HtmlExtractionError) as caught:
        extract_html(f"```html\n{DOC}\n```", finish_reason="length", model="m")
    assert caught.value.truncated


def test_non_html_reply_is_an_error_naming_the_model_and_not_a_truncation():
    with pytest.raises(HtmlExtractionError) as caught:
        extract_html("I'm sorry, I can't help with building that app.", model="tiny-model")
    assert not caught.value.truncated
    assert "tiny-model" in str(caught.value) and "without an HTML document" in str(caught.value)
