"""Google's server-side tools as the test server plays them (model `grounded`).

The request must declare at least one of googleSearch, codeExecution and
urlContext (a 400 otherwise, as a model without a tool cannot ground). The
answer carries what each declared tool would have produced, in the REST
shapes google-genai reads: `executableCode` and `codeExecutionResult` parts
for codeExecution, `groundingMetadata` (webSearchQueries, searchEntryPoint
with its renderedContent, groundingChunks, groundingSupports) for
googleSearch, `urlContextMetadata.urlMetadata` for urlContext. Streamed, the
text comes first, then the code parts, then the last event with the metadata
and the finish reason, as Gemini sends them.
"""

from gemini_wire import BadRequest, last_user_text, server_tools

RENDERED = ('<style>.container{display:flex}</style><div class="container">'
            '<a class="chip" href="https://www.google.com/search?q=sky+blue">why is the sky blue</a></div>')


def grounded_events(body):
    tools = server_tools(body)
    if not tools:
        raise BadRequest("model grounded needs a server-side tool (googleSearch, codeExecution or urlContext)")
    question = last_user_text(body)
    events = [{"candidates": [{"content": {"role": "model", "parts": [{"text": "Grounded: "}]}, "index": 0}]}]
    if "codeExecution" in tools:
        events.append({"candidates": [{"content": {"role": "model", "parts": [
            {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}},
            {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}}]}, "index": 0}]})
    last = {"content": {"role": "model", "parts": [{"text": question}]}, "finishReason": "STOP", "index": 0}
    if "googleSearch" in tools:
        last["groundingMetadata"] = {
            "webSearchQueries": ["why is the sky blue"],
            "searchEntryPoint": {"renderedContent": RENDERED},
            "groundingChunks": [{"web": {"uri": "https://example.org/rayleigh", "title": "example.org"}}],
            "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 9, "text": "Grounded:"},
                                   "groundingChunkIndices": [0], "confidenceScores": [0.9]}],
        }
    if "urlContext" in tools:
        last["urlContextMetadata"] = {"urlMetadata": [
            {"retrievedUrl": "https://example.org/page", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}]}
    events.append({"candidates": [last], "modelVersion": "grounded-model", "responseId": "grounded-1",
                   "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 6, "totalTokenCount": 10}})
    for event in events:
        event.setdefault("modelVersion", "grounded-model")
    return events
