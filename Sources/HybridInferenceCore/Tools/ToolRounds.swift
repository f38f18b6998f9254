/// The tool half of one request's loop: counts the rounds, checks each call
/// against its tool, runs the valid calls of a round concurrently, and turns
/// what they return into the outputs the model reads next.
///
/// The rules, in one place:
/// - at most `limit` rounds of calls; one more is `tooManyToolRounds`;
/// - at most `callLimit` calls in a round; a round that asks for more is
///   `tooManyToolCalls`, thrown before any of its calls runs;
/// - a call of an unknown tool, or with arguments that fail the tool's schema
///   or do not decode into its `Arguments`, is answered with an error output
///   (`{"error": ...}`) once per request, so the model can correct itself; the
///   second such call is `invalidToolCall`;
/// - a tool that throws ends the request with `toolFailed` (its name and its
///   error); the other calls of that round are cancelled;
/// - cancelling the request cancels the tasks the tools run on.
struct ToolRounds: Sendable {
  let tools: [AnyTool]
  let limit: Int
  let callLimit: Int
  private(set) var rounds = 0
  private(set) var correctionUsed = false
  /// Whether any tool has run (after which the request must not fall back).
  private(set) var anyToolRan = false

  init(tools: [AnyTool], options: HybridGenerationOptions) {
    self.tools = tools
    self.limit = options.maximumToolRounds
    self.callLimit = options.maximumToolCallsPerRound
  }

  /// Runs one round of `calls` and returns their outputs, in the calls' order.
  mutating func run(_ calls: [Part.FunctionCall]) async throws -> [Part.FunctionResponse] {
    guard rounds < limit else { throw HybridInferenceError.tooManyToolRounds(limit: limit) }
    guard calls.count <= callLimit else {
      throw HybridInferenceError.tooManyToolCalls(count: calls.count, limit: callLimit)
    }
    rounds += 1
    var outputs: [Part.FunctionResponse?] = Array(repeating: nil, count: calls.count)
    var valid: [(index: Int, tool: AnyTool, call: Part.FunctionCall)] = []
    for (index, call) in calls.enumerated() {
      let tool = tools.first { $0.name == call.name }
      let problem =
        tool.map { $0.problem(with: call.args ?? .object([:])) }
        ?? "there is no tool named \(call.name); the tools are \(tools.map(\.name).joined(separator: ", "))"
      if let problem {
        guard !correctionUsed else { throw HybridInferenceError.invalidToolCall(name: call.name, reason: problem) }
        outputs[index] = .error(problem, name: call.name, id: call.id)
      } else if let tool {
        valid.append((index, tool, call))
      }
    }
    if outputs.contains(where: { $0 != nil }) { correctionUsed = true }
    if !valid.isEmpty { anyToolRan = true }
    for (index, text) in try await Self.call(valid.map { ($0.tool, $0.call) }) {
      let call = valid[index].call
      outputs[valid[index].index] = .output(text, name: call.name, id: call.id)
    }
    return outputs.compactMap { $0 }
  }

  /// Calls every tool at once, each in a child task; the outputs by position.
  private static func call(_ calls: [(AnyTool, Part.FunctionCall)]) async throws -> [(Int, String)] {
    try await withThrowingTaskGroup(of: (Int, String).self) { group in
      for (index, (tool, call)) in calls.enumerated() {
        group.addTask {
          do {
            return (index, try await tool.call(call.args ?? .object([:])))
          } catch {
            if FallbackRule.isCancellation(error) { throw CancellationError() }
            throw HybridInferenceError.toolFailed(name: tool.name, error: error)
          }
        }
      }
      var results: [(Int, String)] = []
      for try await result in group { results.append(result) }
      return results
    }
  }
}

extension GenerateContentResponse {
  /// The function calls of the first candidate, in order.
  var functionCalls: [Part.FunctionCall] {
    candidates.first?.content?.parts.compactMap(\.functionCall) ?? []
  }
}
