import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// A model with a context window of `window` tokens, a token being a word
/// of the instructions or of an entry (a tool call or output counts as one):
/// it refuses a request that does not fit as `LocalSystemModel` does, before
/// any work, and answers one that does. Test target only.
final class WindowedModel: LanguageModel {
  let modelVersion: String
  let placement: ModelPlacement
  let window: Int
  /// Whether `promptTokenCount(for:)` counts (else nil: the library estimates).
  let counts: Bool
  private let state = Locked<(requests: [ModelRequest], counted: Int)>(([], 0))

  init(_ modelVersion: String, placement: ModelPlacement = .onDevice, window: Int, counts: Bool = true) {
    self.modelVersion = modelVersion
    self.placement = placement
    self.window = window
    self.counts = counts
  }

  var availability: Availability { .available }

  /// The requests the model answered (not those it refused), in order.
  var answered: [ModelRequest] { state.withLock { $0.requests } }
  /// How many times the library asked for a count.
  var countCalls: Int { state.withLock { $0.counted } }

  static func tokens(of request: ModelRequest) -> Int {
    let words = { (text: String) in text.split(whereSeparator: \.isWhitespace).count }
    return (request.transcript.instructions.map(words) ?? 0)
      + request.transcript.entries.reduce(0) { total, entry in
        total + words(entry.text) + entry.toolCalls.count + entry.toolOutputs.count
      }
  }

  func promptTokenCount(for request: ModelRequest) async throws -> Int? {
    state.withLock { $0.counted += 1 }
    return counts ? Self.tokens(of: request) : nil
  }

  func streamResponse(to request: ModelRequest) -> ResponseDeltaStream {
    let needed = Self.tokens(of: request)
    guard needed <= window else {
      return .failing(HybridInferenceError.contextWindowExceeded(contextSize: window, tokenCount: needed))
    }
    state.withLock { $0.requests.append(request) }
    return .producing { [modelVersion] continuation in
      continuation.yield(
        GenerateContentResponse(
          candidates: [Candidate(content: Content(role: "model", text: "fits"), finishReason: .stop)],
          modelVersion: modelVersion))
    }
  }
}
