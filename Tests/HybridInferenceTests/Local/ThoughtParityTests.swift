import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceLlama

/// The device splits a thinking model's output into thoughts and answer as
/// llama.cpp's own parser (`common_chat_parse`, through the
/// chat-parse-reference the set-up builds) splits it, for every fixture
/// template that thinks by the library's reading (`ThoughtSyntax`) or by
/// llama.cpp's (its parser reports a reasoning split).
///
/// Each output goes through the streaming path's `AnswerParts`, whole and one
/// scalar at a time (a tag split across tokens), after the prompt the library
/// renders for one user turn; the reference parses it after the generation
/// prompt it renders for the same turn. Reasoning and content are compared up
/// to the spaces at their ends; tool calls are only recorded (in a
/// difference's text: no tools are offered, the library's tool formats being
/// checked elsewhere).
final class ThoughtParityTests: XCTestCase {
  private static let templates = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chat-templates/templates")

  /// An output as a model writes it: `<S>` and `<E>` are the template's
  /// start and end tags, `<P>` the start tag where the generation prompt
  /// has not opened the block already (nothing where it has).
  struct Case {
    let name: String
    let pattern: String

    func output(start: String, end: String, opened: Bool) -> String {
      pattern.replacingOccurrences(of: "<P>", with: opened ? "" : start)
        .replacingOccurrences(of: "<S>", with: start).replacingOccurrences(of: "<E>", with: end)
    }
  }

  /// Outputs of this test's own, then tests/test-chat.cpp's thinking cases in each template's tags.
  static let cases: [Case] = [
    Case(name: "plain", pattern: "<P>a<E>b"),
    Case(name: "empty thoughts", pattern: "<P><E>Hello, world!"),
    Case(name: "empty block with spaces", pattern: "<P>\n\n<E>\n\nHello"),
    Case(name: "repeated blocks", pattern: "<P>a<E>b<S>c<E>d"),
    Case(name: "nested start tag", pattern: "<P><S>a<E>b<E>c"),
    Case(name: "unclosed block", pattern: "<P>a\nb"),
    Case(name: "end tag in the answer", pattern: "<P>a<E>The tag <E> ends a thought."),
    Case(
      name: "end tag in a tool argument",
      pattern: "<P>a<E>\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"<E>\"}}\n</tool_call>"),
    Case(name: "no tags", pattern: "Hello"),
    Case(name: "spaces before the block", pattern: " \n<P>a<E>b"),
    Case(name: "test-chat thoughts", pattern: "<P>I'm\nthinking<E>Hello, world!\nWhat's up?"),
    Case(name: "test-chat spaced thoughts", pattern: "<P>I'm\nthinking\n<E>\n\nHello, world!\nWhat's up?"),
    Case(name: "test-chat leading space", pattern: "<P> thinking<E>Hello, world!\nWhat's up?"),
    Case(name: "test-chat end tag alone", pattern: "<E>Hello, world!"),
  ]

  /// Templates whose splits differ from llama.cpp's in the cases named, each with why.
  /// The test checks that each still differs in exactly those cases, so a fix leaves the list.
  static let knownDifferences: [String: (cases: Set<String>, reason: String)] = [
    "Apriel-1.6-15b-Thinker-fixed": (
      every,
      "unknown tags: llama.cpp reads everything before `[BEGIN FINAL RESPONSE]` as reasoning, after the "
        + "\"Here are my reasoning steps:\" its prompt ends with; the library shows it all as answer"
    ),
    "Kimi-K2-Instruct": (every.subtracting(["no tags", "spaces before the block", "test-chat end tag alone"]), kimiK2),
    "moonshotai-Kimi-K2": (
      every.subtracting(["no tags", "spaces before the block", "test-chat end tag alone"]), kimiK2
    ),
    "Kimi-K3": (
      every,
      "unknown tags: llama.cpp splits at `<|open|>think<|sep|>` / `<|close|>think<|sep|>` (the prompt opens "
        + "the block); the library shows it all as answer"
    ),
    "MiniMax-M3": (
      every.subtracting(["no tags", "spaces before the block"]),
      "unknown tags: llama.cpp splits at `<mm:think>` / `</mm:think>`; the library shows it all as answer"
    ),
    "google-gemma-4-31B-it": (every.subtracting(["no tags"]), gemma4),
    "google-gemma-4-31B-it-interleaved": (every.subtracting(["no tags"]), gemma4),
    "unsloth-mistral-Devstral-Small-2507": (
      every.subtracting(["no tags", "spaces before the block", "test-chat end tag alone"]),
      "unknown tags: the template never writes `[/THINK]`, which llama.cpp's Mistral parser splits at; the "
        + "library shows it all as answer"
    ),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": (
      every.subtracting(["unclosed block"]),
      "llama.cpp takes an answer only inside `<|START_RESPONSE|>`…`<|END_RESPONSE|>` and drops the markers; "
        + "it rejects these outputs, which have none; the library leaves such a marker, where the device "
        + "prints one, in the answer"
    ),
    "Cohere2MoE": (
      every.subtracting(["no tags", "unclosed block"]),
      "llama.cpp takes an answer only inside `<|START_TEXT|>`…`<|END_TEXT|>` and drops the markers; it "
        + "rejects these outputs, which have none; the library leaves such a marker, where the device prints "
        + "one, in the answer"
    ),
    "LFM2.5-Instruct": (
      every.subtracting(["no tags", "test-chat end tag alone"]),
      "llama.cpp's parser for it keeps the output whole as content, `<think>` and all; the library splits "
        + "off the block the template's `</think>` names"
    ),
    "llama-cpp-rwkv-world": (
      every,
      "the prompt ends in ` <think>` when `enable_thinking` is set, which the library binds: the library reads "
        + "the output as an opened block; llama.cpp's generation prompt for it is empty, so it splits only at "
        + "a `<think>` the model writes"
    ),
    "Kimi-K2-Thinking": (["spaces before the block"], leadingSpaces),
    "LFM2.5-8B-A1B": (["spaces before the block"], leadingSpaces),
    "mistralai-Ministral-3-14B-Reasoning-2512": (["spaces before the block"], leadingSpaces),
    "openai-gpt-oss-120b": (
      [
        "end tag in a tool argument", "end tag in the answer", "nested start tag", "no tags", "repeated blocks",
        "spaces before the block", "test-chat end tag alone",
      ],
      "llama.cpp ends the final channel at an `<|end|>` (a control token the device does not print) and "
        + "drops what follows, and rejects an output that does not open with a channel header"
    ),
  ]
  static let every = Set(cases.map(\.name))
  static let kimiK2 =
    "unknown tags: the template never writes `</think>`, which llama.cpp's Kimi K2 parser splits at; the "
    + "library shows it all as answer"
  static let gemma4 =
    "unknown tags: llama.cpp splits at `<|channel>thought` / `<channel|>`; the library shows it all as answer"
  static let leadingSpaces =
    "llama.cpp's parser for it opens a block only at the output's first character, so spaces before the start "
    + "tag make it all answer; the library skips them"

  func testEveryThinkingTemplate_splitsOutputsAsLlamaCppDoes() throws {
    guard let path = ChatParseReference.binaryPath else {
      throw Prerequisite.missing("llama.cpp's chat-parse-reference (make setup)")
    }
    let reference = ChatParseReference(path: path)
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.templates.path)
      .filter { $0.hasSuffix(".jinja") }.sorted()
    var covered: [String] = []
    var unexpected: [String] = []
    var fixed: [String] = []
    for file in files {
      let name = String(file.dropLast(".jinja".count))
      let source = try String(contentsOf: Self.templates.appendingPathComponent(file), encoding: .utf8)
      guard let differences = try differences(template: source, reference: reference) else { continue }
      covered.append(name)
      let differing = Set(differences.keys)
      let known = Self.knownDifferences[name]?.cases ?? []
      for (caseName, detail) in differences.sorted(by: { $0.key < $1.key }) where !known.contains(caseName) {
        unexpected.append("\(name), \(caseName): \(detail)")
      }
      for caseName in known.subtracting(differing).sorted() { fixed.append("\(name), \(caseName)") }
    }
    print("ThoughtParityTests: \(covered.count) templates: \(covered.joined(separator: ", "))")
    XCTAssertGreaterThan(covered.count, 30, "the fixture set has llama.cpp's thinking templates")
    XCTAssertEqual(Set(Self.knownDifferences.keys).subtracting(covered), [], "listed templates not covered")
    XCTAssertEqual(unexpected, [], "splits that differ from llama.cpp's")
    XCTAssertEqual(fixed, [], "known differences that now match: take them off the list")
  }

  /// The cases whose split differs from the reference's, each with both
  /// splits; nil when neither the library nor llama.cpp reads the template as thinking.
  private func differences(template source: String, reference: ChatParseReference) throws -> [String: String]? {
    let thinking = ThinkingSwitch(template: source, reasoning: nil)
    let probe = try reference.splits(template: source, outputs: [])
    let theirStart = probe.thinkingStartTag ?? ""
    let theirEnd = probe.thinkingEndTags?.first ?? ""
    let theirs = probe.supportsThinking == true && !theirStart.isEmpty && !theirEnd.isEmpty
    guard thinking.syntax != nil || theirs else { return nil }
    let template = ChatTemplate(template: source, bosToken: "<s>", eosToken: "</s>")
    var rendered = template.render([.init(role: "user", content: "Hi")], switches: thinking.variables, log: .silent)
    thinking.closeBlock(in: &rendered)
    let prompt = rendered.text
    // The tags the outputs are written in: the library's where it knows the template, else llama.cpp's.
    let start = thinking.syntax?.start ?? theirStart
    let end = thinking.syntax.map { $0.closing.trimmingCharacters(in: .whitespacesAndNewlines) } ?? theirEnd
    let opened = thinking.syntax?.isOpened(by: prompt) ?? Self.ends(probe.generationPrompt ?? "", with: start)
    let outputs = Self.cases.map { $0.output(start: start, end: end, opened: opened) }
    let splits = try reference.splits(template: source, outputs: outputs).splits ?? []
    XCTAssertEqual(splits.count, outputs.count, "one split per output")
    var differences: [String: String] = [:]
    for (testCase, (output, split)) in zip(Self.cases, zip(outputs, splits)) {
      // gpt-oss's `<|end|>` is a control token: llama.cpp's text holds it, the device's does not.
      let printed = thinking.syntax == .harmony ? output.replacingOccurrences(of: "<|end|>", with: "") : output
      let whole = Self.split([printed], syntax: thinking.syntax, prompt: prompt)
      let streamed = Self.split(printed.unicodeScalars.map { String($0) }, syntax: thinking.syntax, prompt: prompt)
      XCTAssertEqual(whole.reasoning, streamed.reasoning, "\(testCase.name), one scalar at a time: \(output)")
      XCTAssertEqual(whole.content, streamed.content, "\(testCase.name), one scalar at a time: \(output)")
      let ours = "(\(Self.quoted(whole.reasoning)), \(Self.quoted(whole.content)))"
      if let error = split.error {
        differences[testCase.name] = "\(Self.quoted(output)): ours \(ours), llama.cpp: \(error)"
        continue
      }
      if Self.stripped(whole.reasoning) != Self.stripped(split.reasoningContent ?? "")
        || Self.stripped(whole.content) != Self.stripped(split.content ?? "")
      {
        let calls = (split.toolCalls ?? []).map { "\($0.name)(\($0.arguments))" }
        differences[testCase.name] =
          "\(Self.quoted(output)): ours \(ours), llama.cpp (\(Self.quoted(split.reasoningContent ?? "")), "
          + "\(Self.quoted(split.content ?? ""))\(calls.isEmpty ? "" : ", calls \(calls)"))"
      }
    }
    return differences
  }

  /// The thoughts and answer the streaming path shows for `pieces`, fed in order.
  private static func split(_ pieces: [String], syntax: ThoughtSyntax?, prompt: String) -> (
    reasoning: String, content: String
  ) {
    let splitter = syntax.map { ThoughtSplitter(syntax: $0, opened: $0.isOpened(by: prompt)) }
    var parts = AnswerParts(thoughts: splitter, calls: nil)
    var shown = pieces.flatMap { parts.feed($0) }
    shown += (try? parts.finish()) ?? []
    let reasoning = shown.filter { $0.thought == true }.compactMap(\.text).joined()
    let content = shown.filter { $0.thought != true }.compactMap(\.text).joined()
    return (reasoning, content)
  }

  private static func ends(_ prompt: String, with tag: String) -> Bool {
    var scalars = prompt.unicodeScalars[...]
    while let last = scalars.last, ThoughtSplitter.isSpace(last) { scalars = scalars.dropLast() }
    return !tag.isEmpty && scalars.reversed().starts(with: tag.unicodeScalars.reversed())
  }

  /// `text` less the spaces at its ends: llama.cpp's tests/test-chat.cpp
  /// compares its parser's splits so (`string_strip`), and its parsers keep
  /// or drop the spaces around a tag template by template.
  private static func stripped(_ text: String) -> String {
    text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  private static func quoted(_ text: String) -> String {
    text.debugDescription
  }
}
