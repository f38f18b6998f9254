import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama

/// The device reads tool calls as llama.cpp's own parser (`common_chat_parse`,
/// through the chat-parse-reference the set-up builds) reads them, for every
/// fixture template: the outputs are what the template itself prints for an
/// assistant turn with one call and with two (what its model was trained to
/// write), and tests/test-chat.cpp's outputs for the templates whose models
/// write calls otherwise than their history shows them.
///
/// An output the reference reads no call in is not compared (llama.cpp
/// expects another form there: a reasoning block first, a turn marker);
/// every other one must give the same calls (names and arguments), unless
/// the template is listed with the reason.
final class ToolCallParityTests: XCTestCase {
  /// test-chat.cpp's tool-call outputs (`special_function` with `arg1: 1`), by template.
  static let testChatOutputs: [String: [String]] = [
    "ByteDance-Seed-OSS": [
      "<seed:tool_call>\n<function=special_function>\n<parameter=arg1>1</parameter>\n</function>\n</seed:tool_call>"
    ],
    "Kimi-K3": [
      "<|open|>response<|sep|><|close|>response<|sep|><|open|>tools<|sep|>"
        + "<|open|>call tool=\"special_function\" index=\"1\"<|sep|>"
        + "<|open|>argument key=\"arg1\" type=\"number\"<|sep|>1<|close|>argument<|sep|>"
        + "<|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>"
    ],
    "MiniMax-M2": [
      "\n</think>\n\n<minimax:tool_call>\n<invoke name=\"special_function\">\n<parameter "
        + "name=\"arg1\">1</parameter>\n</invoke>\n</minimax:tool_call>"
    ],
    "NVIDIA-Nemotron-Nano-v2": [
      "I'm\nthinking\n</think>\n<TOOLCALL>[{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}]</TOOLCALL>"
    ],
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": [
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>special_function\n"
        + "```json\n{\"arg1\": 1}```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ],
    "llama-cpp-deepseek-r1": [
      "</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>special_function\n"
        + "```json\n{\"arg1\": 1}```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ],
    "meetkai-functionary-medium-v3.1": ["<function=special_function>{\"arg1\": 1}</function>"],
    "unsloth-Apriel-1.5": [
      "<tool_calls>[{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}]</tool_calls>"
    ],
    "Apriel-1.6-15b-Thinker-fixed": [
      "I'm\nthinking\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": \"special_function\", \"arguments\": "
        + "{\"arg1\": 1}}]</tool_calls>"
    ],
    "GigaChat3-10B-A1.8B": [
      "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}"
    ],
  ]

  /// Templates whose calls the device does not read as llama.cpp does, each with why.
  static let knownDifferences: [String: String] = [
    "LFM2.5-8B-A1B":
      "Python-style calls (`[get_weather(city='Paris')]`): no pattern describes them, so the device uses "
      + "its generic format for this template",
    "MiniMax-M3":
      "each argument's key is its own tag name (`<city>Paris</city>`): no pattern describes it, so the device "
      + "uses its generic format",
    "google-gemma-4-31B-it":
      "bare keys and strings quoted with `<|\"|>` (`{city:<|\"|>Paris<|\"|>}`): no pattern describes them, so "
      + "the device uses its generic format",
    "google-gemma-4-31B-it-interleaved":
      "bare keys and strings quoted with `<|\"|>`: no pattern describes them, so the device uses its generic "
      + "format",
  ]

  func testEveryTemplate_readsCallsAsLlamaCppDoes() throws {
    guard let path = ChatParseReference.binaryPath else {
      throw Prerequisite.missing("chat-parse-reference (make setup builds it)")
    }
    let reference = ChatParseReference(path: path)
    let names = try FileManager.default.contentsOfDirectory(atPath: ToolCallSyntax.fixtureTemplates.path)
      .filter { $0.hasSuffix(".jinja") }.sorted()
    var compared: Set<String> = []
    var differing: [String: String] = [:]
    for file in names {
      let name = String(file.dropLast(".jinja".count))
      let source = try String(contentsOf: ToolCallSyntax.fixtureTemplates.appendingPathComponent(file), encoding: .utf8)
      let template = ChatTemplate(template: source)
      let outputs =
        [1, 2].compactMap { ToolFixtures.printedCalls(template, count: $0) } + (Self.testChatOutputs[name] ?? [])
      guard !outputs.isEmpty else { continue }
      let theirs = try reference.splits(
        template: source, outputs: outputs, tools: [ToolFixtures.weatherJSON, ToolFixtures.specialJSON])
      let syntax = template.toolSyntax ?? .generic
      for (index, output) in outputs.enumerated() {
        let expected = (theirs.splits?[safe: index]?.toolCalls ?? []).map {
          ToolFixtures.Call(name: $0.name, arguments: (try? JSONPrefixParser.parse($0.arguments).jsonValue) ?? .null)
        }
        guard !expected.isEmpty else { continue }
        compared.insert(name)
        let read = ToolFixtures.read(output, syntax: syntax)
        if read != expected { differing[name] = "\(output.debugDescription): \(read) != \(expected)" }
      }
    }
    XCTAssertGreaterThanOrEqual(compared.count, 45, "templates whose calls llama.cpp reads: \(compared.sorted())")
    for (name, difference) in differing where Self.knownDifferences[name] == nil {
      XCTFail("\(name) reads calls otherwise than llama.cpp: \(difference)")
    }
    for name in Self.knownDifferences.keys where differing[name] == nil {
      XCTFail("\(name) now reads calls as llama.cpp does: take it off the known differences")
    }
  }
}

/// The tools and outputs the tool-format tests share.
enum ToolFixtures {
  /// One call as both sides read it.
  struct Call: Equatable, CustomStringConvertible {
    let name: String
    let arguments: JSONValue
    var description: String { "\(name)(\(arguments))" }
  }

  static let weatherSchema =
    #"{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"]}"#
  static let specialSchema =
    #"{"type":"object","properties":{"arg1":{"type":"integer","description":"The arg."}},"required":["arg1"]}"#

  static var weather: ToolDeclaration { tool("get_weather", "Weather for a city.", weatherSchema) }
  static var special: ToolDeclaration { tool("special_function", "I'm special", specialSchema) }
  static var weatherJSON: [String: Any] { json(weather, weatherSchema) }
  static var specialJSON: [String: Any] { json(special, specialSchema) }

  private static func tool(_ name: String, _ description: String, _ schema: String) -> ToolDeclaration {
    ToolDeclaration(
      name: name, description: description,
      parameters: (try? GenerationSchema(jsonSchema: schema)) ?? GenerationSchema(deriving: String.self))
  }

  private static func json(_ tool: ToolDeclaration, _ schema: String) -> [String: Any] {
    let parameters = (try? JSONSerialization.jsonObject(with: Data(schema.utf8))) ?? [:]
    return [
      "type": "function",
      "function": ["name": tool.name, "description": tool.description, "parameters": parameters] as [String: Any],
    ]
  }

  /// The calls the device reads in `output`, streamed one scalar at a time (a marker split across tokens).
  static func read(_ output: String, syntax: ToolCallSyntax) -> [Call] {
    var filter = ToolCallStreamFilter(syntax: syntax, tools: [weather, special])
    for scalar in output.unicodeScalars { _ = filter.feed(String(scalar)) }
    guard let calls = try? filter.finish().calls else { return [Call(name: "(error)", arguments: .null)] }
    return calls.map { Call(name: $0.name, arguments: $0.args ?? .object([:])) }
  }

  /// The text `template` prints for an assistant turn with `count` calls of
  /// get_weather(city: "Paris", days: 3), as the probe reads it.
  static func printedCalls(_ template: ChatTemplate, count: Int) -> String? {
    guard case .success(let compiled)? = template.compiled else { return nil }
    func render(_ calls: Int) -> String? {
      let call = Part.FunctionCall(
        id: "abcdefghi", name: "get_weather", args: .object(["city": .string("Paris"), "days": .number(3)]))
      let messages = [
        ChatTemplate.Message(role: "user", content: "Hi"),
        ChatTemplate.Message(role: "assistant", content: "", toolCalls: Array(repeating: call, count: calls)),
      ]
      return try? compiled.render(template.variables(messages, false, tools: [weather]))
    }
    guard let none = render(0), let some = render(count) else { return nil }
    let region = ToolCallPattern.callRegion(of: some, besides: none)
    return region.isEmpty ? nil : ProbeText.string(region[...])
  }
}

extension Array {
  fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
