"""The Gemini REST protocol as the test server checks and speaks it.

Request validation (unknown fields are refused the way Google refuses them),
error bodies, the `echo` answers, and SSE event splitting. Standard library
only; imported by gemini_server.py.
"""

import base64
import binascii
import json
import re

PATH = re.compile(r"^/(v1|v1beta|v1alpha)/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")
# Vertex AI: /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:{method}
VERTEX_PATH = re.compile(r"^/(v1|v1beta1)/projects/([^/]+)/locations/([a-z0-9-]+)/publishers/google/models/([^/:]+)"
                         r":(generateContent|streamGenerateContent|countTokens)$")

GENERATE_FIELDS = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools",
                   "toolConfig", "cachedContent", "model", "labels"}
COUNT_FIELDS = {"contents", "generateContentRequest"}
# Vertex AI's CountTokensRequest (google-genai's _CountTokensParameters_to_vertex).
VERTEX_COUNT_FIELDS = {"contents", "systemInstruction", "tools", "generationConfig", "model", "instances"}
# REST Tool: function declarations, or one of Google's server-side tools.
TOOL_FIELDS = {"functionDeclarations", "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext",
               "retrieval", "googleMaps", "enterpriseWebSearch", "computerUse", "fileSearch"}
SERVER_TOOL_FIELDS = {"googleSearch": {"timeRangeFilter", "excludeDomains"}, "codeExecution": set(),
                      "urlContext": set()}
CONTENT_FIELDS = {"role", "parts"}
PART_FIELDS = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode",
               "codeExecutionResult", "thought", "thoughtSignature", "videoMetadata"}
CONFIG_FIELDS = {"temperature", "topP", "topK", "candidateCount", "maxOutputTokens", "stopSequences",
                 "presencePenalty", "frequencyPenalty", "seed", "responseMimeType", "responseSchema",
                 "responseJsonSchema", "responseModalities", "thinkingConfig", "responseLogprobs",
                 "logprobs", "speechConfig", "mediaResolution"}
THINKING_FIELDS = {"thinkingLevel", "thinkingBudget", "includeThoughts"}
# google-genai's Blob and FileData; `displayName` is Vertex-only (the SDK refuses it for the Gemini API).
BLOB_FIELDS = {"mimeType", "data"}
FILE_DATA_FIELDS = {"mimeType", "fileUri"}
MIME_TYPE = re.compile(r"^[A-Za-z0-9!#$&^_.+-]{1,127}/[A-Za-z0-9!#$&^_.+-]{1,127}$")
THINKING_LEVELS = {"THINKING_LEVEL_UNSPECIFIED", "MINIMAL", "LOW", "MEDIUM", "HIGH"}


class BadRequest(Exception):
    def __init__(self, message, status="INVALID_ARGUMENT", code=400):
        super().__init__(message)
        self.message, self.status, self.code = message, status, code


def error_body(code, status, message, details=None):
    error = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return json.dumps({"error": error}, indent=2).encode()


def parse_model(model):
    name, *parts = model.split("~")
    options = {}
    for part in parts:
        key, _, value = part.partition("-")
        options[key] = value
    return name, options


def check_fields(obj, allowed, where):
    if not isinstance(obj, dict):
        raise BadRequest(f"Invalid value at '{where}': expected an object")
    for key in obj:
        if key not in allowed:
            raise BadRequest(f'Invalid JSON payload received. Unknown name "{key}" at \'{where}\': Cannot find field.')


def check_contents(contents, where):
    if not isinstance(contents, list) or not contents:
        raise BadRequest(f"* {where}: contents is not specified")
    for index, content in enumerate(contents):
        check_fields(content, CONTENT_FIELDS, f"{where}[{index}]")
        if content.get("role") not in ("user", "model"):
            raise BadRequest(f"Please use a valid role: user, model. Got {content.get('role')!r}")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise BadRequest(f"* {where}[{index}].parts: contents.parts must not be empty.")
        for part_index, part in enumerate(parts):
            check_fields(part, PART_FIELDS, f"{where}[{index}].parts[{part_index}]")
            check_media(part, f"{where}[{index}].parts[{part_index}]")
            # A part must carry data: `{}`, `{"thought": true}` or `{"text": ""}` alone is refused.
            if not (set(part) - {"thought", "thoughtSignature", "text"}) and not part.get("text") \
                    and "thoughtSignature" not in part:
                raise BadRequest(f"* {where}[{index}].parts[{part_index}].data: required oneof field 'data' "
                                 "must have one initialized field")


def check_media(part, where):
    """`inlineData` as google-genai's Blob (standard base64 `data`, a MIME type), `fileData` as its FileData."""
    if "inlineData" in part:
        blob = part["inlineData"]
        check_fields(blob, BLOB_FIELDS, f"{where}.inline_data")
        if not isinstance(blob.get("mimeType"), str) or not MIME_TYPE.match(blob["mimeType"]):
            raise BadRequest(f"* {where}.inline_data.mime_type: a MIME type is required")
        data = blob.get("data")
        try:
            if not isinstance(data, str) or not data or not base64.b64decode(data, validate=True):
                raise ValueError
        except (ValueError, binascii.Error):
            raise BadRequest(f"Invalid value at '{where}.inline_data.data' (TYPE_BYTES), Base64 decoding failed")
    if "fileData" in part:
        file = part["fileData"]
        check_fields(file, FILE_DATA_FIELDS, f"{where}.file_data")
        if not isinstance(file.get("fileUri"), str) or "://" not in file["fileUri"]:
            raise BadRequest(f"* {where}.file_data.file_uri: a URI is required")
        if "mimeType" in file and (not isinstance(file["mimeType"], str) or not MIME_TYPE.match(file["mimeType"])):
            raise BadRequest(f"* {where}.file_data.mime_type: invalid MIME type")


def media_marker(part):
    """What the echo answers say for a media part: `[image/png, 3 bytes]`, `[video/mp4 at gs://b/v]`."""
    if "inlineData" in part:
        blob = part["inlineData"]
        return f"[{blob['mimeType']}, {len(base64.b64decode(blob['data']))} bytes]"
    if "fileData" in part:
        file = part["fileData"]
        return f"[{file.get('mimeType', '?')} at {file['fileUri']}]"
    return ""


def check_generate(body, where="request"):
    check_fields(body, GENERATE_FIELDS, where)
    check_contents(body.get("contents"), f"{where}.contents")
    if body["contents"][-1].get("role") == "model":
        # As Gemini: a request must not end with the model's turn (no prefill).
        raise BadRequest("Please ensure that the last turn is a user turn or a function response.")
    if "systemInstruction" in body:
        check_fields(body["systemInstruction"], CONTENT_FIELDS, f"{where}.system_instruction")
    config = body.get("generationConfig")
    if config is not None:
        check_fields(config, CONFIG_FIELDS, f"{where}.generation_config")
        thinking = config.get("thinkingConfig")
        if thinking is not None:
            check_fields(thinking, THINKING_FIELDS, f"{where}.generation_config.thinking_config")
            level = thinking.get("thinkingLevel")
            if level is not None and level not in THINKING_LEVELS:
                raise BadRequest(f"Invalid value at 'generation_config.thinking_config.thinking_level', \"{level}\"")
    for index, setting in enumerate(body.get("safetySettings") or []):
        check_fields(setting, {"category", "threshold"}, f"{where}.safety_settings[{index}]")
    check_tools(body.get("tools"), f"{where}.tools")


def check_tools(tools, where):
    """Every tools entry is a REST Tool; Google's server-side tools take their options object."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise BadRequest(f"Invalid value at '{where}': expected a list")
    for index, tool in enumerate(tools):
        check_fields(tool, TOOL_FIELDS, f"{where}[{index}]")
        if not tool:
            raise BadRequest(f"* {where}[{index}]: a tool must declare something")
        for name, allowed in SERVER_TOOL_FIELDS.items():
            if name in tool:
                check_fields(tool[name], allowed, f"{where}[{index}].{name}")


def server_tools(body):
    """The names of the server-side tools a request declares, in order."""
    return [name for tool in body.get("tools") or [] for name in SERVER_TOOL_FIELDS if name in tool]


def last_user_text(body):
    contents = body.get("contents") or body.get("generateContentRequest", {}).get("contents") or []
    for content in reversed(contents):
        if content.get("role") == "user":
            return "".join(part.get("text", "") + media_marker(part) for part in content.get("parts", []))
    return ""


def echo_events(model, body):
    text = "echo: " + last_user_text(body)
    third = max(1, len(text) // 3)
    pieces = [text[:third], text[third:2 * third], text[2 * third:]]
    events = []
    for index, piece in enumerate(pieces):
        candidate = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
        event = {"candidates": [candidate], "modelVersion": "echo-model", "responseId": "echo-1"}
        if index == len(pieces) - 1:
            candidate["finishReason"] = "STOP"
            event["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8}
        events.append(event)
    return events


def echo_unary(model, body):
    event = echo_events(model, body)
    text = "".join(e["candidates"][0]["content"]["parts"][0]["text"] for e in event)
    merged = event[-1]
    merged["candidates"][0]["content"]["parts"][0]["text"] = text
    return merged


def split_events(raw):
    """Splits an SSE body into events, each with its own bytes and separator."""
    pieces = re.split(rb"(\r\n\r\n|\n\n)", raw)
    events = []
    for index in range(0, len(pieces), 2):
        chunk = pieces[index] + (pieces[index + 1] if index + 1 < len(pieces) else b"")
        if chunk:
            events.append(chunk)
    return events


def example_for_schema(schema, defs=None):
    """A value that satisfies `schema` (the subset structured output uses)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return example_for_schema(defs[schema["$ref"].split("/")[-1]], defs)
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return example_for_schema(schema[union][0], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        return {name: example_for_schema(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        count = max(2, schema.get("minItems", 0))
        count = min(count, schema.get("maxItems", count))
        return [example_for_schema(schema.get("items", {}), defs) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 7))
    if kind == "number":
        return float(schema.get("minimum", 2.5))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "a \"quoted\" text, \u00e9t\u00e9"


def json_events(body):
    """The schema's example as JSON text, in three events; None when the
    request does not ask for JSON with a schema (a 400, as Gemini would)."""
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema")
    if config.get("responseMimeType") != "application/json" or not isinstance(schema, dict):
        return None
    text = json.dumps(example_for_schema(schema), ensure_ascii=False, separators=(",", ":"))
    third = max(1, len(text) // 3)
    pieces = [text[:third], text[third:2 * third], text[2 * third:]]
    events = []
    for index, piece in enumerate(pieces):
        candidate = {"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}
        if index == len(pieces) - 1:
            candidate["finishReason"] = "STOP"
        events.append({"candidates": [candidate], "modelVersion": "json-model", "responseId": "json-1"})
    return events
