"""Function calling as the test server plays it (model `tools`).

Each request is checked the way Gemini would and beyond: the declarations
(name, description, parametersJsonSchema), the toolConfig, and, for every
earlier round in `contents`, that the model's functionCall turn came back
unchanged (ids, arguments, thought signature) and was followed by a user
turn of functionResponse parts answering each call, by name and id.

Round r (counted by the functionResponse turns so far) answers with a
thought, then `calls` calls of the first allowed function, each with the
schema's example arguments, id `call-r-i` and thought signature `sig-r`;
after `rounds` rounds (default 1) it answers "done: " + every output.
"""

import json

from gemini_wire import BadRequest, example_for_schema


def signature(round_number):
    return f"sig-{round_number}"


def check_declarations(body):
    # Server-side tools (googleSearch, ...) may be declared beside the functions, each in its own entry.
    tools = [tool for tool in body.get("tools") or [] if "functionDeclarations" in tool]
    if len(tools) != 1:
        raise BadRequest("tools expects exactly one Tool holding functionDeclarations")
    declarations = tools[0].get("functionDeclarations")
    if set(tools[0]) != {"functionDeclarations"} or not declarations:
        raise BadRequest("Unknown name in tools[0]: only functionDeclarations is used here")
    for declaration in declarations:
        if set(declaration) != {"name", "description", "parametersJsonSchema"}:
            raise BadRequest(f"function declaration fields: {sorted(declaration)}")
        if declaration["parametersJsonSchema"].get("type") != "object":
            raise BadRequest("parametersJsonSchema must be an object schema")
    return declarations


def check_config(body):
    config = body.get("toolConfig", {}).get("functionCallingConfig", {"mode": "AUTO"})
    mode = config.get("mode")
    if mode not in ("AUTO", "ANY", "NONE"):
        raise BadRequest(f"Invalid value at 'tool_config.function_calling_config.mode', {mode!r}")
    if "allowedFunctionNames" in config and mode != "ANY":
        raise BadRequest("allowedFunctionNames needs mode ANY")
    return mode, config.get("allowedFunctionNames")


def check_history(contents):
    """Every earlier round: a model turn of calls, then a user turn answering each."""
    rounds = 0
    outputs = []
    for index, content in enumerate(contents):
        calls = [part for part in content["parts"] if "functionCall" in part]
        if not calls:
            continue
        rounds += 1
        if content["role"] != "model":
            raise BadRequest(f"contents[{index}]: functionCall parts belong to a model turn")
        if calls[0].get("thoughtSignature") != signature(rounds):
            raise BadRequest(f"contents[{index}]: the thought signature did not come back unchanged")
        answer = contents[index + 1] if index + 1 < len(contents) else None
        if answer is None or answer["role"] != "user":
            raise BadRequest(f"contents[{index}]: the calls are not followed by a user turn of responses")
        responses = [part["functionResponse"] for part in answer["parts"] if "functionResponse" in part]
        if len(responses) != len(calls):
            raise BadRequest(f"contents[{index + 1}]: {len(responses)} responses for {len(calls)} calls")
        for call, response in zip(calls, responses):
            call = call["functionCall"]
            if (response.get("name"), response.get("id")) != (call["name"], call.get("id")):
                raise BadRequest(f"contents[{index + 1}]: a response does not match its call {call}")
            if not isinstance(response.get("response"), dict):
                raise BadRequest(f"contents[{index + 1}]: functionResponse.response must be an object")
            outputs.append(response["response"].get("output", response["response"].get("error")))
    return rounds, outputs


def tool_events(body, options):
    declarations = check_declarations(body)
    mode, allowed = check_config(body)
    rounds_done, outputs = check_history(body["contents"])
    rounds = int(options.get("rounds", "1"))
    calls = int(options.get("calls", "1"))
    if mode == "NONE" or (mode == "AUTO" and rounds_done >= rounds):
        text = "done: " + " | ".join(str(output) for output in outputs)
        half = len(text) // 2
        return [event([{"text": text[:half]}]), event([{"text": text[half:]}], finish=True)]
    names = allowed or [declaration["name"] for declaration in declarations]
    declaration = next(d for d in declarations if d["name"] == names[0])
    arguments = example_for_schema(declaration["parametersJsonSchema"])
    number = rounds_done + 1
    parts = [{"functionCall": {"id": f"call-{number}-{i}", "name": declaration["name"], "args": arguments}}
             for i in range(1, calls + 1)]
    parts[0]["thoughtSignature"] = signature(number)
    return [event([{"text": f"Round {number}: calling a tool.", "thought": True}]), event(parts, finish=True)]


def event(parts, finish=False):
    candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = "STOP"
    result = {"candidates": [candidate], "modelVersion": "tools-model", "responseId": "tools-1"}
    if finish:
        result["usageMetadata"] = {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10}
    return result
