import HybridInferenceCore
import HybridInferenceJinja

/// How a request's `GenerationOptions.reasoning` reaches the chat template.
///
/// `.off` uses the template's own switch where it reads one
/// (`enable_thinking: false`, as Qwen3 and SmolLM3 do), so the prompt is the
/// one the model was trained with; a template that thinks without a switch
/// (the DeepSeek-R1 distills) gets a block closed before it starts, written
/// after the generation prompt as Qwen3 writes its own (`<think>\n\n</think>\n\n`).
/// `.light`, `.moderate` and `.deep` become gpt-oss's `reasoning_effort`
/// ("low", "medium", "high") where the template reads it.
struct ThinkingSwitch: Sendable {
  /// The template's thought tags, if it thinks.
  let syntax: ThoughtSyntax?
  /// The value of `enable_thinking` where the template reads it: false for
  /// `.off`, else true, as llama.cpp always sets it (a template may think
  /// only when it is set: `{% if not enable_thinking %}</think>{% endif %}`).
  let enableThinking: Bool?
  /// The value of `reasoning_effort`, when the template reads it and the
  /// request sets an effort.
  let reasoningEffort: String?
  /// Whether an empty block is to be written after the generation prompt.
  private let closesBlock: Bool

  init(template: String?, reasoning: GenerationOptions.Reasoning?) {
    let source = template ?? ""
    syntax = ThoughtSyntax.declared(in: source)
    let off = reasoning?.kind == .off
    let switchable = source.contains("enable_thinking")
    enableThinking = switchable ? !off : nil
    reasoningEffort =
      if case .effort(let effort) = reasoning?.kind, source.contains("reasoning_effort") { effort.rawValue } else {
        nil
      }
    closesBlock = off && !switchable && syntax != nil
  }

  /// The template variables this sets.
  var variables: [String: JinjaValue] {
    var variables: [String: JinjaValue] = [:]
    if let enableThinking { variables["enable_thinking"] = .bool(enableThinking) }
    if let reasoningEffort { variables["reasoning_effort"] = .string(reasoningEffort) }
    return variables
  }

  /// Writes the closed block after `prompt`'s generation prompt when thinking
  /// is off and the template has no switch: the block the prompt opened is
  /// closed, or an empty one is written.
  func closeBlock(in prompt: inout RenderedPrompt) {
    guard closesBlock, let syntax else { return }
    let opened = syntax.isOpened(by: prompt.text)
    prompt.segments.append(.markup(opened ? syntax.closing : syntax.emptyBlock))
  }
}
