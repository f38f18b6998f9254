/// What every transcript a session writes satisfies, checked where a
/// transcript comes from outside: its decoder (a `DecodingError`) and the
/// first request of a session restored from one built in code
/// (`HybridInferenceError.invalidTranscript`).
///
/// - A tool output answers a call of the turn just before it, a model turn:
///   by id where the output has one, else by name.
/// - Calls are the model's and outputs the app's: no call in a user turn,
///   no output in a model turn.
///
/// One pass over the entries, no recursion, and each turn's calls in sets, so
/// any transcript is checked in time proportional to its size.
extension Transcript {
  /// The first problem, as the index of its entry and a reason.
  func firstProblem() -> (entry: Int, reason: String)? {
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
