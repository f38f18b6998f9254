import CLlama
import HybridInferenceCore
import HybridInferenceJinja

extension LlamaModel {
  /// How many leading tokens of `prompt` hold nothing a session said: the
  /// template's own opening (SmolLM2's default system turn, a date line),
  /// the instructions and the tool declarations, up to where the first
  /// message after them begins. Another session whose prompt starts with the
  /// same tokens may reuse their KV cells.
  ///
  /// Found without looking into any message: the conversation's first turn
  /// is rendered twice with two different bodies, and only what the two
  /// renderings share, and the prompt starts with, counts.
  func shareablePrefix(
    of prompt: [llama_token], messages: [ChatTemplate.Message], tools: [ToolDeclaration],
    cancellation: JinjaCancellation? = nil
  ) throws(HybridInferenceError) -> Int {
    let opening = messages.prefix { $0.role == "system" }
    func probe(_ body: String) throws(HybridInferenceError) -> [llama_token] {
      try tokenize(
        template.render(
          opening + [.init(role: "user", content: body)], tools: tools, log: .silent, cancellation: cancellation))
    }
    let first = try probe("A")
    let second = try probe("B")
    let fixed = zip(first, second).prefix { $0 == $1 }.count
    return zip(first.prefix(fixed), prompt).prefix { $0 == $1 }.count
  }
}
