import HybridInferenceCore

extension RequestOptions {
  /// What is wrong with these options, or nil: a time limit or a size limit
  /// of zero or less.
  ///
  /// Such a limit cannot be met by any answer, so a call with it is refused
  /// as `invalidOptions` before anything is sent. Letting it through would
  /// end the call as a connect that timed out (`offline`) or an answer that
  /// is too large, which a hybrid reads as a fact about the server (falling
  /// back, remembering the origin as offline) when it is a fact about the
  /// options.
  package var problem: String? {
    if timeout <= .zero { return "RequestOptions.timeout must be > 0, got \(timeout)" }
    if connectTimeout <= .zero { return "RequestOptions.connectTimeout must be > 0, got \(connectTimeout)" }
    if maximumResponseBytes <= 0 {
      return "RequestOptions.maximumResponseBytes must be > 0, got \(maximumResponseBytes)"
    }
    if maximumEventBytes <= 0 { return "RequestOptions.maximumEventBytes must be > 0, got \(maximumEventBytes)" }
    if maximumStreamedResponseBytes <= 0 {
      return "RequestOptions.maximumStreamedResponseBytes must be > 0, got \(maximumStreamedResponseBytes)"
    }
    return nil
  }

  /// Throws `invalidOptions` with `problem`, if there is one.
  package func validate() throws {
    if let problem { throw HybridInferenceError.invalidOptions(problem) }
  }
}
