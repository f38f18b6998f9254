// chat-parse-reference: llama.cpp's own split of a model's output into
// reasoning, content and tool calls, for the thought-parity tests.
//
// Reads one JSON object on stdin:
//   {"template": "<jinja source>", "output": "<model text>", "enable_thinking": true,
//    "tools": [<OpenAI-style tools>], "parallel_tool_calls": true, "bos_token": "", "eos_token": ""}
// renders one user message "Hi" with the generation prompt through the
// template (common_chat_templates_apply, reasoning_format deepseek), which
// gives the chat format, the generation prompt and the serialized PEG parser,
// then parses the output as a whole (is_partial false) as llama-server does
// at the end of a completion. Prints one JSON object on stdout:
//   {"format", "generation_prompt", "supports_thinking", "thinking_start_tag",
//    "thinking_end_tags", "reasoning_content", "content", "tool_calls": [{"name", "arguments"}]}
// or {"error": "..."} when the template or the output does not parse. Exits 0
// in both cases, so that a caller tells a parse failure from a crash.
// With "outputs": [...] instead of "output", it renders once and prints the
// chat parameters' fields with "splits": [<one object as above per output>]:
// one process for many outputs of one template (none: the parameters only).
//
// Built by scripts/build-chat-parse-reference.sh against the set-up's
// libllama-common.so and the headers of the same llama.cpp source.

#include "chat.h"
#include "peg-parser.h"

#include <nlohmann/json.hpp>

#include <exception>
#include <iostream>
#include <iterator>
#include <string>

using ordered_json = nlohmann::ordered_json;

// The chat parameters of one user turn "Hi" with the generation prompt.
static common_chat_params chat_params(const ordered_json & request) {
    const std::string source = request.at("template").get<std::string>();
    const std::string bos    = request.value("bos_token", std::string());
    const std::string eos    = request.value("eos_token", std::string());

    auto templates = common_chat_templates_init(/* model= */ nullptr, source, bos, eos);

    common_chat_templates_inputs inputs;
    common_chat_msg              user;
    user.role    = "user";
    user.content = "Hi";
    inputs.messages              = { user };
    inputs.add_generation_prompt = true;
    inputs.use_jinja             = true;
    inputs.enable_thinking       = request.value("enable_thinking", true);
    inputs.parallel_tool_calls   = request.value("parallel_tool_calls", true);
    inputs.reasoning_format      = COMMON_REASONING_FORMAT_DEEPSEEK;
    if (request.contains("tools") && request.at("tools").is_array() && !request.at("tools").empty()) {
        inputs.tools = common_chat_tools_parse_oaicompat(common_json::parse(request.at("tools").dump()));
    }

    return common_chat_templates_apply(templates.get(), inputs);
}

// What the template's chat parameters say about thinking.
static ordered_json describe(const common_chat_params & params) {
    ordered_json result;
    result["format"]             = common_chat_format_name(params.format);
    result["generation_prompt"]  = params.generation_prompt;
    result["supports_thinking"]  = params.supports_thinking;
    result["thinking_start_tag"] = params.thinking_start_tag;
    result["thinking_end_tags"]  = params.thinking_end_tags;
    return result;
}

// `output` split as llama-server splits a finished completion.
static ordered_json split(const common_chat_params & params, const std::string & output) {
    common_chat_parser_params syntax(params);
    syntax.reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;
    syntax.parser.load(params.parser);
    const common_chat_msg msg = common_chat_parse(output, /* is_partial= */ false, syntax);

    ordered_json result          = describe(params);
    result["reasoning_content"]  = msg.reasoning_content;
    result["content"]            = msg.content;
    ordered_json calls           = ordered_json::array();
    for (const auto & call : msg.tool_calls) {
        calls.push_back({ { "name", call.name }, { "arguments", call.arguments } });
    }
    result["tool_calls"] = calls;
    return result;
}

int main() {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    ordered_json result;
    try {
        const ordered_json request = ordered_json::parse(input);
        const common_chat_params params = chat_params(request);
        if (request.contains("outputs")) {
            ordered_json splits = ordered_json::array();
            for (const auto & output : request.at("outputs")) {
                try {
                    splits.push_back(split(params, output.get<std::string>()));
                } catch (const std::exception & e) {
                    splits.push_back({ { "error", e.what() } });
                }
            }
            result           = describe(params);
            result["splits"] = splits;
        } else {
            result = split(params, request.at("output").get<std::string>());
        }
    } catch (const std::exception & e) {
        result = { { "error", e.what() } };
    } catch (...) {
        result = { { "error", "unknown exception" } };
    }
    // Bad UTF-8 in a split is replaced rather than thrown on.
    std::cout << result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    return 0;
}
