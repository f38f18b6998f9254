import Foundation
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// The Swift Jinja engine against Python jinja2 (as transformers runs it) on
/// llama.cpp's ~70 reference templates × a conversation corpus, byte for byte.
///
/// The expected outputs are committed (Tests/Fixtures/chat-templates/expected.json),
/// so the comparison is hermetic; `scripts/render-chat-templates.py` regenerates
/// them with the venv's pinned jinja2. Where jinja2 raises, the engine must throw.
final class ChatTemplateReferenceTests: XCTestCase {
  private static let fixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chat-templates")
  /// The date the reference renders gave `strftime_now` (2025-03-07 09:30 UTC).
  private static let now = Date(timeIntervalSince1970: 1_741_339_800)

  /// Template × conversation pairs left out of the comparison, with why.
  private static let leftOut: [String: String] = [
    "llama-cpp-deepseek-r1.jinja × tool definitions":
      "jinja2's `map` returns a generator, which `tojson` refuses; the engine's `map` returns a list and renders",
    "llama-cpp-deepseek-r1.jinja × tool call and result":
      "jinja2's `map` returns a generator, which `tojson` refuses; the engine's `map` returns a list and renders",
    "meetkai-functionary-medium-v3.1.jinja × tool definitions":
      "`'...'|safe + text` is a Markup concatenation that HTML-escapes `text` in jinja2; the engine has no Markup type",
    "meetkai-functionary-medium-v3.1.jinja × tool call and result":
      "`'...'|safe + text` is a Markup concatenation that HTML-escapes `text` in jinja2; the engine has no Markup type",
  ]

  private struct Expected: Decodable {
    var output: String?
    var error: String?
  }

  private struct Reference: Decodable {
    var results: [String: [Expected]]
  }

  func testEveryReferenceTemplate_rendersAsJinja2Does() throws {
    let conversations = try OrderedJSON.parse(
      Data(contentsOf: Self.fixtures.appendingPathComponent("conversations.json")))
    guard case .array(let corpus) = conversations else { return XCTFail("conversations.json is not a list") }
    let reference = try JSONDecoder().decode(
      Reference.self, from: Data(contentsOf: Self.fixtures.appendingPathComponent("expected.json")))
    var identical = 0
    var total = 0
    var failures: [String] = []
    for (name, rows) in reference.results.sorted(by: { $0.key < $1.key }) {
      let source = try String(
        contentsOf: Self.fixtures.appendingPathComponent("templates/\(name)"), encoding: .utf8)
      var firstDifference: String?
      for (conversation, expected) in zip(corpus, rows) {
        guard case .dict(let fields) = conversation,
          Self.leftOut["\(name) × \(fields["name"]?.pythonString ?? "")"] == nil
        else { continue }
        total += 1
        let difference = Self.compare(source, conversation, expected)
        if let difference {
          firstDifference = firstDifference ?? difference
        } else {
          identical += 1
        }
      }
      if let firstDifference { failures.append("\(name): \(firstDifference)") }
    }
    print("chat templates: \(identical) / \(total) templates × conversations identical to jinja2")
    for (name, why) in Self.leftOut.sorted(by: { $0.key < $1.key }) { print("left out: \(name): \(why)") }
    for failure in failures { print("differs: \(failure)") }
    XCTAssertEqual(identical, total, failures.joined(separator: "\n"))
  }

  /// Nil when the engine does what jinja2 did; else the first difference.
  private static func compare(_ source: String, _ conversation: JinjaValue, _ expected: Expected) -> String? {
    guard case .dict(let fields) = conversation else { return "bad conversation" }
    let label = fields["name"]?.pythonString ?? "?"
    var variables: [String: JinjaValue] = [
      "messages": fields["messages"] ?? .array([]),
      "tools": fields["tools"] ?? .none,
      "documents": .none,
      "add_generation_prompt": fields["add_generation_prompt"] ?? .bool(false),
      "bos_token": .string("<|bos|>"),
      "eos_token": .string("<|eos|>"),
    ]
    // Set only where the conversation sets it, as the library and llama.cpp do.
    if let enableThinking = fields["enable_thinking"] { variables["enable_thinking"] = enableThinking }
    let rendered: Result<String, JinjaError> = Result { () throws(JinjaError) in
      try JinjaTemplate(source).render(variables, now: now)
    }
    switch (rendered, expected.output) {
    case (.success(let output), let want?):
      guard output != want else { return nil }
      let common = zip(output, want).prefix { $0 == $1 }.count
      let got = String(output.dropFirst(max(0, common - 20)).prefix(60))
      let wanted = String(want.dropFirst(max(0, common - 20)).prefix(60))
      return
        "[\(label)] output differs at character \(common): got \(got.debugDescription), want \(wanted.debugDescription)"
    case (.failure(let error), let want?):
      _ = want
      return "[\(label)] engine throws \(error) where jinja2 renders"
    case (.success, nil):
      return "[\(label)] engine renders where jinja2 raises \(expected.error ?? "")"
    case (.failure, nil):
      return nil
    }
  }
}
