import HybridInferenceCore
import HybridInferenceRemote

/// The function calls of a streamed answer, put together from their pieces.
///
/// A stream sends each call in fragments keyed by `index`: the first with
/// the id and name, the rest each adding text to the `arguments` string. The
/// session runs a call only once it is whole, so the pieces are taken out of
/// each chunk as it arrives and the calls delivered together at the end.
struct ToolCallAssembly {
  private var calls: [Int: (id: String?, name: String, arguments: String)] = [:]

  /// Moves the tool-call fragments of `chunk` into the assembly.
  mutating func take(from chunk: inout ChatCompletionResponse) {
    for choiceIndex in chunk.choices.indices {
      guard let fragments = chunk.choices[choiceIndex].delta?.toolCalls else { continue }
      chunk.choices[choiceIndex].delta?.toolCalls = nil
      for (position, fragment) in fragments.enumerated() {
        let index = fragment.index ?? position
        var call = calls[index] ?? (nil, "", "")
        if let id = fragment.id, !id.isEmpty { call.id = id }
        // The name comes whole in the first piece (some servers repeat it).
        if let name = fragment.function?.name, call.name.isEmpty { call.name = name }
        if let arguments = fragment.function?.arguments { call.arguments += arguments }
        calls[index] = call
      }
    }
  }

  /// The whole calls as one delta, in index order; nil when there were none.
  func response(modelVersion: String) -> GenerateContentResponse? {
    guard !calls.isEmpty else { return nil }
    let parts = calls.sorted { $0.key < $1.key }.map { _, call in
      Part(functionCall: ChatCompletionResponse.functionCall(id: call.id, call.name, call.arguments))
    }
    return GenerateContentResponse(
      candidates: [Candidate(content: Content(role: "model", parts: parts), index: 0)], modelVersion: modelVersion)
  }
}
