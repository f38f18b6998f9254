/// How the session and a hybrid ask one model: the response stamped with the
/// model's placement where the backend left it open, and, under
/// `ContextOverflow.dropOldestTurns`, the request trimmed and asked again
/// when the model refuses it as too long (`OverflowTrimming`).
///
/// A hybrid is asked as it is: it asks its own models this way, with the
/// permission to trim it passes on.
enum ModelCall {
  /// One answer from `model`.
  static func respond(_ model: any LanguageModel, to request: ModelRequest) async throws
    -> GenerateContentResponse
  {
    var attempt = OverflowTrimming.prepared(request, for: model)
    while true {
      do {
        var response = try await model.respond(to: attempt.sent)
        response.stampPlacement(model.placement)
        return response
      } catch {
        guard let next = try await OverflowTrimming.retry(after: error, attempt, on: model) else { throw error }
        attempt = next
      }
    }
  }

  /// `model`'s deltas. Under `dropOldestTurns` the model is asked again with
  /// a trimmed request while nothing has been delivered (a model refuses a
  /// request that is too long before it decodes anything); otherwise this is
  /// the model's own stream, untouched. The caller stamps the placement.
  static func stream(_ model: any LanguageModel, to request: ModelRequest) -> ResponseDeltaStream {
    guard OverflowTrimming.trims(request, for: model) else { return model.streamResponse(to: request) }
    let first = OverflowTrimming.prepared(request, for: model)
    return .producing { continuation in
      var attempt = first
      while true {
        var delivered = false
        do {
          for try await delta in model.streamResponse(to: attempt.sent) {
            delivered = true
            continuation.yield(delta)
          }
          return
        } catch {
          guard !delivered, let next = try await OverflowTrimming.retry(after: error, attempt, on: model) else {
            throw error
          }
          attempt = next
        }
      }
    }
  }
}

extension GenerateContentResponse {
  /// Sets `placement` to `placement` unless the backend (or a hybrid nearer
  /// to it) already did.
  mutating func stampPlacement(_ placement: ModelPlacement) {
    if knownPlacement == nil { knownPlacement = placement }
  }

  /// The response with `stampPlacement(_:)` applied.
  func placed(_ placement: ModelPlacement) -> GenerateContentResponse {
    var stamped = self
    stamped.stampPlacement(placement)
    return stamped
  }
}
