/// Context overflow across a hybrid (`ContextOverflow`): only the model that
/// answers last trims a transcript that does not fit.
extension HybridModel {
  /// The secondary's own failure, when the primary was refused only for its
  /// window (asked without the permission to trim, `primaryRequest`) and the
  /// secondary then failed too: the primary is the model that answers last
  /// after all, and is asked again, allowed to trim. Nil otherwise.
  static func leavesTrimming(_ primaryError: any Error, _ failure: any Error) -> (any Error)? {
    guard case .contextWindowExceeded? = primaryError as? HybridInferenceError,
      case .bothModelsFailed(_, let secondaryError)? = failure as? HybridInferenceError
    else { return nil }
    return secondaryError
  }

  /// Asks the primary again with the request's own permission to trim (see
  /// `leavesTrimming`); when that fails too, the error says what each model
  /// failed with. Cancellation passes through unchanged.
  func askPrimaryTrimming<Result>(
    after secondaryError: any Error, _ request: ModelRequest, _ body: () async throws -> Result
  ) async throws -> Result {
    request.logHandler.log(
      LogRecord(
        level: .warning, category: .routing,
        message: "\(secondary.modelVersion) failed too (\(HybridInferenceError.describe(secondaryError))): "
          + "asking \(primary.modelVersion) again, allowed to drop the oldest exchanges"))
    do {
      return try await body()
    } catch {
      if FallbackRule.isCancellation(error) { throw error }
      throw HybridInferenceError.bothModelsFailed(primary: error, secondary: secondaryError)
    }
  }

  /// The request as the primary gets it: without the permission to trim
  /// (`ContextOverflow`) while the secondary can still answer, so that a
  /// primary the transcript does not fit falls back first and only the model
  /// that answers last trims. With the secondary unavailable or known to
  /// fail, the primary is that model and keeps the permission.
  func primaryRequest(_ request: ModelRequest) -> ModelRequest {
    guard request.contextOverflow != .fail, secondary.isAvailable, secondary.rememberedFailure == nil else {
      return request
    }
    var stripped = request
    stripped.contextOverflow = .fail
    return stripped
  }
}
