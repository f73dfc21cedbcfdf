// The page's text as a user reads it, for answering a question (`_answer.py`): `document.body.innerText`
// (what is rendered, line by line; hidden elements left out), at most `maxChars` characters. Runs in
// the harness's isolated world, so the app's scripts cannot change what it says.
(maxChars) => ((document.body && document.body.innerText) || '').slice(0, maxChars)
