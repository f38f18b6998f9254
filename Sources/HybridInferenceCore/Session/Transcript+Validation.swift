/// What every transcript a session writes satisfies, checked where a
/// transcript comes from outside: its decoder (a `DecodingError`) and the
/// first request of a session restored from one built in code
/// (`HybridInferenceError.invalidTranscript`).
///
/// - A tool output answers a call of the turn just before it, a model turn:
///   by id where the output has one, else by name.
/// - Calls are the model's and outputs the app's: no call in a user turn,
///   no output in a model turn.
/// - No call's arguments and no output nest deeper than
///   `JSONValue.maximumDepth`: every backend walks them recursively.
///
/// One pass over the entries, no recursion, and each turn's calls in sets, so
/// any transcript is checked in time proportional to its size.
extension Transcript {
  /// The first problem, as the index of its entry and a reason.
  func firstProblem() -> (entry: Int, reason: String)? {
    if let problem = firstNestingProblem() { return problem }
    for (index, entry) in entries.enumerated() {
      let calls = entry.toolCalls
      let outputs = entry.toolOutputs
      switch entry.role {
      case .user:
        if let call = calls.first {
          return (index, "entry \(index) is a user turn with a call of \(call.name); only the model calls tools")
        }
        guard !outputs.isEmpty else { continue }
        let asked = Asked(index > 0 && entries[index - 1].role == .model ? entries[index - 1].toolCalls : [])
        for output in outputs where !asked.answered(by: output) {
          let id = output.id.map { " (id \($0))" } ?? ""
          return (
            index, "entry \(index) holds an output of \(output.name)\(id) with no call of it in the model turn before"
          )
        }
      case .model:
        if let output = outputs.first {
          return (index, "entry \(index) is a model turn with an output of \(output.name); outputs are the app's")
        }
      }
    }
    return nil
  }

  /// Throws `invalidTranscript` for the first problem.
  func validate() throws(HybridInferenceError) {
    if let problem = firstProblem() { throw .invalidTranscript(problem.reason) }
  }

  /// Throws `invalidTranscript` for a value nested deeper than
  /// `JSONValue.maximumDepth`: what a backend checks before it encodes or
  /// renders a transcript, since a `ModelRequest` reaches it without a
  /// session's validation.
  package func checkNesting() throws(HybridInferenceError) {
    if let problem = firstNestingProblem() { throw .invalidTranscript(problem.reason) }
  }

  /// The first call or output nested deeper than `JSONValue.maximumDepth`.
  private func firstNestingProblem() -> (entry: Int, reason: String)? {
    let limit = JSONValue.maximumDepth
    for (index, entry) in entries.enumerated() {
      for part in entry.content.parts {
        if let call = part.functionCall, call.args?.nests(deeperThan: limit) == true {
          return (index, "entry \(index) holds a call of \(call.name) whose arguments nest deeper than \(limit) levels")
        }
        if let output = part.functionResponse, output.response.nests(deeperThan: limit) {
          return (index, "entry \(index) holds an output of \(output.name) nested deeper than \(limit) levels")
        }
      }
    }
    return nil
  }

  /// The calls of one model turn, looked up by id and by name in constant
  /// time, so that a turn of many calls and many outputs costs their number,
  /// not its square.
  private struct Asked {
    let ids: Set<[String]>
    let names: Set<String>

    init(_ calls: [Part.FunctionCall]) {
      ids = Set(calls.compactMap { call in call.id.map { [$0, call.name] } })
      names = Set(calls.map(\.name))
    }

    /// By id where the output has one (and the same name), else by name.
    func answered(by output: Part.FunctionResponse) -> Bool {
      if let id = output.id { return ids.contains([id, output.name]) }
      return names.contains(output.name)
    }
  }
}
