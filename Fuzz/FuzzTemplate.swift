import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: the chat template engine (issue 19, point 6), where
/// the input is a template from a downloaded model file.
///
/// The input is a template's source. It is parsed, then rendered the way a
/// request renders it (`ChatTemplate.render`: the real render, the
/// placeholder render and the split, the fallback to llama.cpp's matcher)
/// with a conversation that has instructions, a tool call and its output,
/// and one tool; then the engine alone renders it without a generation
/// prompt. A template error is the expected outcome of garbage; a trap, an
/// ASan report, a leak or an input that runs past libFuzzer's timeout is a
/// finding, and so is a render that ends outside its budget's limits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTemplate(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let source = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  let template = ChatTemplate(template: source, bosToken: "<s>", eosToken: "</s>")
  _ = template.render(FuzzTemplateInput.messages, tools: FuzzTemplateInput.tools, log: .silent)
  let variables = template.variables(FuzzTemplateInput.messages, false, tools: FuzzTemplateInput.tools)
  let budget = JinjaBudget(JinjaBudget.Limits(for: variables))
  if case .success(let engine)? = template.compiled, let text = try? engine.render(variables, budget: budget) {
    let limits = budget.limits
    if text.utf8.count > limits.outputBytes || budget.steps > limits.steps || budget.depth != 0
      || budget.deepest > limits.depth || budget.deepestMacro > limits.macroDepth
    {
      fatalError("a render ended outside its budget: \(budget.steps) steps, \(text.utf8.count) bytes")
    }
  }
  return 0
}

/// The conversation every input renders.
enum FuzzTemplateInput {
  static let messages: [ChatTemplate.Message] = [
    .init(role: "system", content: "You are terse."),
    .init(role: "user", content: "What is the weather in Paris?"),
    .init(
      role: "assistant", content: "",
      toolCalls: [Part.FunctionCall(id: "call_1", name: "get_weather", args: .object(["city": .string("Paris")]))]),
    .init(role: "tool", content: #"{"temperature": 21}"#, toolCallID: "call_1", name: "get_weather"),
    .init(role: "assistant", content: "It is 21 °C <|im_end|> in Paris."),
    .init(role: "user", content: "Thanks!"),
  ]

  static let tools: [ToolDeclaration] = [
    ToolDeclaration(
      name: "get_weather", description: "The weather in a city.",
      parameters: (try? GenerationSchema(
        jsonSchema: #"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}"#))
        ?? GenerationSchema(deriving: String.self))
  ]
}
