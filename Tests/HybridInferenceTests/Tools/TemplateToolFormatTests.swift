import Foundation
import TestPrerequisites
import XCTest

@testable import HybridInferenceCore
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama

/// Each template's own call syntax, end to end on device: a tiny
/// random-weight model carrying the template (scripts/make-template-models.py)
/// is prompted with the tools through the template, forced by the grammar
/// the template's pattern gives, and the call it writes is read back and runs
/// the tool. Random weights write whatever the grammar allows, so this holds
/// for any model of the family.
final class TemplateToolFormatTests: XCTestCase {
  static let families = [
    "Qwen-Qwen2.5-7B-Instruct",  // <tool_call>{"name": ..., "arguments": ...}</tool_call>
    "Qwen3-Coder",  // <function=...><parameter=...>value</parameter>
    "GLM-4.6",  // <tool_call>name<arg_key>...</arg_key><arg_value>...</arg_value>
    "Mistral-Small-3.2-24B-Instruct-2506",  // [TOOL_CALLS]name[CALL_ID]id[ARGS]{...}
    "moonshotai-Kimi-K2",  // <|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use",  // <|START_ACTION|>[{"tool_call_id": "0", ...}]
    "deepseek-ai-DeepSeek-V3.1",  // calls printed, tools not: described in the system turn
    "deepseek-ai-DeepSeek-V3.2",  // DSML invoke/parameter with string="true|false"
    "Apertus-8B-Instruct",  // [{"name": {...}}]
    "meta-llama-Llama-3.1-8B-Instruct",  // a bare {"name": ..., "parameters": ...}
  ]

  func testEachFamily_promptsForcesAndReadsItsOwnCalls() async throws {
    let models = try GeneratedFiles.templateModels.get()
    var failures: [String] = []
    for family in Self.families {
      guard models.kinds.contains(family) else {
        failures.append("\(family): no template model")
        continue
      }
      let weather = WeatherTool()
      let model = LocalSystemModel(modelPath: "\(models.directory)/\(family).gguf", contextSize: 8192, threads: 2)
      let session = GenerativeModelSession(model: model, tools: [weather], logHandler: .silent)
      let options = HybridGenerationOptions(
        foundationModels: GenerationOptions(sampling: .random(top: 40, seed: 7), maximumResponseTokens: 600),
        toolChoice: .required)
      // The forced first call is what this checks: random weights may go on
      // calling (or break a call off at the token limit) in the free rounds after it.
      var failure: (any Error)?
      do {
        _ = try await session.respond(to: "Weather in Paris?", options: options)
      } catch {
        failure = error
      }
      if weather.log.all.isEmpty {
        failures.append("\(family): the tool did not run (\(failure.map { "\($0)" } ?? "no error"))")
      }
    }
    XCTAssertEqual(failures, [])
  }

  func testCallsAfterThinking_areRead_andACallInsideThoughts_isNot() throws {
    let syntax = ToolCallSyntax.ofFixture("Qwen-Qwen3-0.6B.jinja")
    guard let think = ThoughtSyntax(start: "<think>", end: "</think>") else { return XCTFail("tags refused") }
    func parts(_ output: String) throws -> [Part] {
      var answer = AnswerParts(
        thoughts: ThoughtSplitter(syntax: think, opened: false),
        calls: ToolCallStreamFilter(syntax: syntax, tools: [ToolFixtures.weather]))
      var parts: [Part] = []
      for scalar in output.unicodeScalars { parts += answer.feed(String(scalar)) }
      return parts + (try answer.finish())
    }
    let call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>"
    let after = try parts("<think>Paris, so the tool.</think>\n" + call)
    XCTAssertEqual(after.compactMap(\.functionCall).map(\.name), ["get_weather"])
    XCTAssertEqual(after.filter { $0.thought == true }.compactMap(\.text).joined(), "Paris, so the tool.")
    let inside = try parts("<think>maybe " + call + "</think>It is sunny.")
    XCTAssertTrue(inside.compactMap(\.functionCall).isEmpty, "a call in the thoughts is not run")
    XCTAssertEqual(inside.filter { $0.thought != true }.compactMap(\.text).joined(), "It is sunny.")
  }

  func testTaggedArguments_takeTheirTypesFromTheSchema_andAFakeCloseInAValueStaysText() throws {
    let coder = ToolCallSyntax.ofFixture("Qwen3-Coder.jinja")
    let output =
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew </function> York\n</parameter>\n"
      + "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    let read = ToolFixtures.read(output, syntax: coder)
    XCTAssertEqual(
      read,
      [
        ToolFixtures.Call(
          name: "get_weather", arguments: .object(["city": .string("New </function> York"), "days": .number(3)]))
      ])
    let dsml = ToolCallSyntax.ofFixture("deepseek-ai-DeepSeek-V3.2.jinja")
    let marked =
      "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
      + "<｜DSML｜parameter name=\"city\" string=\"true\">7</｜DSML｜parameter>\n"
      + "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    XCTAssertEqual(
      ToolFixtures.read(marked, syntax: dsml),
      [ToolFixtures.Call(name: "get_weather", arguments: .object(["city": .string("7"), "days": .number(3)]))])
  }

  func testMalformedCallsAfterTheTrigger_areTypedErrors_notCrashes() {
    let outputs: [(String, String)] = [
      ("Qwen-Qwen2.5-7B-Instruct.jinja", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "),
      ("Qwen3-Coder.jinja", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis"),
      ("Mistral-Small-3.2-24B-Instruct-2506.jinja", "[TOOL_CALLS]get_weather[CALL_ID]abc[ARGS]{\"city\": [[[["),
      (
        "moonshotai-Kimi-K2.jinja",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.:x<|tool_call_argument_begin|>"
      ),
    ]
    for (template, output) in outputs {
      var filter = ToolCallStreamFilter(syntax: ToolCallSyntax.ofFixture(template), tools: [ToolFixtures.weather])
      _ = filter.feed(output)
      XCTAssertThrowsError(try filter.finish(), template) { error in
        guard case .generationFailed? = error as? HybridInferenceError else { return XCTFail("\(template): \(error)") }
      }
    }
  }

  func testTenThousandTriggers_stayBounded() throws {
    let syntax = ToolCallSyntax.ofFixture("Qwen-Qwen2.5-7B-Instruct.jinja")
    var filter = ToolCallStreamFilter(syntax: syntax, tools: [ToolFixtures.weather])
    _ = filter.feed(String(repeating: "<tool_call>", count: 10_000))
    XCTAssertThrowsError(try filter.finish())
  }

  /// Hostile tagged values, in a child process (a crash would end it):
  /// a nesting bomb, Int.min, a number past Double, a megabyte of opens.
  func testHostileTaggedValues_areTypedErrorsOrValues_inAChildProcess() async throws {
    try await ChildProcess.assertPasses(self) {
      let coder = ToolCallSyntax.ofFixture("Qwen3-Coder.jinja")
      func call(days: String) -> String {
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n" + days
          + "\n</parameter>\n</function>\n</tool_call>"
      }
      let bomb = ToolFixtures.read(call(days: String(repeating: "[", count: 200_000)), syntax: coder)
      XCTAssertEqual(bomb.first?.name, "get_weather", "an unreadable JSON value is kept as text")
      for number in ["-9223372036854775808", "1e999999", "99999999999999999999999999"] {
        XCTAssertEqual(ToolFixtures.read(call(days: number), syntax: coder).count, 1, number)
      }
      var filter = ToolCallStreamFilter(syntax: coder, tools: [ToolFixtures.weather])
      _ = filter.feed("<tool_call>\n<function=get_weather>" + String(repeating: "\n<parameter=", count: 100_000))
      XCTAssertThrowsError(try filter.finish())
    }
  }
}
