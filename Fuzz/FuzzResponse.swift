import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: decoding what the server sends (issue 9, point 7).
///
/// The input goes through every path a body takes: `GenerateContentResponse`
/// and the checks on it, the error envelope in each of its framings and its
/// mapping to `CloudAPIError` (`RemoteErrorMapping.apiError` and
/// `streamError`), and `countTokens`' answer. Any trap (a crash, an overflow,
/// an ASan report) is a finding; typed errors are the expected outcome of
/// garbage.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzResponse(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let data = Data(bytes: start, count: count)
  let decoder = JSONDecoder()
  if let response = try? decoder.decode(GenerateContentResponse.self, from: data) {
    _ = try? ResponseChecks.checkComplete(response)
    var accumulator = ResponseAccumulator()
    accumulator.add(response)
    accumulator.add(response)
    if let accumulated = accumulator.response {
      _ = try? ResponseChecks.checkDelta(response, accumulated: accumulated)
      _ = accumulated.text
      _ = accumulated.thoughtText
    }
    _ = try? JSONEncoder().encode(response)
    _ = response.candidates.map(\.isEmpty)
  }
  let key = APIKey("AIzaSy-fuzz-key")
  let status = 400 + count % 200
  _ = RemoteErrorMapping.apiError(status: status, contentType: "application/json", body: data, secrets: key)
  _ = RemoteErrorMapping.streamError(data, secrets: key)
  _ = try? decoder.decode(CountTokensResponse.self, from: data)
  return 0
}
