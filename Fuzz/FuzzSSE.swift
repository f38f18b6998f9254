import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: the SSE parser (issue 9, point 7).
///
/// The input is split into chunks at points taken from its first byte, so the
/// fuzzer explores the chunk boundaries the network can produce. Checked on
/// every input: parsing never traps, whole-body and chunked parsing give the
/// same events, each event's data fits within the input, the event limit is
/// honoured, and the line search stays linear.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSSE(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let input = Array(UnsafeBufferPointer(start: start, count: count))
  guard let seed = input.first else { return 0 }
  let body = input.dropFirst()
  let limit = seed & 1 == 0 ? Int.max : 64 + Int(seed)

  var whole = SSEParser(maximumEventBytes: limit)
  let wholeEvents = try? whole.feed(body) + whole.finish()

  var chunked = SSEParser(maximumEventBytes: limit)
  var chunkedEvents: [SSEEvent]? = []
  var position = body.startIndex
  var step = Int(seed % 7) + 1
  while position < body.endIndex, chunkedEvents != nil {
    let end = min(position + step, body.endIndex)
    do {
      chunkedEvents? += try chunked.feed(body[position..<end])
    } catch {
      chunkedEvents = nil
    }
    position = end
    step = step * 3 % 11 + 1
  }
  if chunkedEvents != nil {
    do {
      chunkedEvents? += try chunked.finish()
    } catch {
      chunkedEvents = nil
    }
  }
  // A limit error may come earlier in chunks (an unfinished line is counted
  // as it grows); a success must give the same events either way.
  if let wholeEvents, let chunkedEvents, wholeEvents != chunkedEvents {
    fatalError("chunked parsing differs: \(wholeEvents) vs \(chunkedEvents)")
  }
  if limit == Int.max, (wholeEvents == nil) || (chunkedEvents == nil) {
    fatalError("an unlimited parser refused the body")
  }
  for event in wholeEvents ?? [] where event.data.utf8.count > body.count * 3 {
    fatalError("an event's data is larger than the body could make it")
  }
  if chunked.scannedByteCount > 2 * body.count + 16 {
    fatalError("the line search scanned \(chunked.scannedByteCount) bytes of a \(body.count)-byte body")
  }
  return 0
}
