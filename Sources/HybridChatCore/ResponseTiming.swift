/// How long one answer took, measured by the command around the request.
public struct ResponseTiming: Sendable, Hashable {
  /// From sending the request to the end of the answer.
  public var total: Duration
  /// From sending the request to the first text or thought; nil when the answer was not
  /// streamed (`--no-stream`), where there is no first token to see.
  public var timeToFirstToken: Duration?

  /// A measurement.
  public init(total: Duration, timeToFirstToken: Duration? = nil) {
    self.total = total
    self.timeToFirstToken = timeToFirstToken
  }

  /// The generation speed for `tokens` generated tokens (thoughts and answer).
  ///
  /// When streamed, the tokens after the first over the time after the first,
  /// which is the decode speed that llama.cpp's own tools report, free of the
  /// prompt's prefill; otherwise all tokens over the whole time. Nil when
  /// there is nothing to divide.
  public func tokensPerSecond(tokens: Int) -> Double? {
    if let first = timeToFirstToken, tokens > 1 {
      let decoding = (total - first).seconds
      if decoding > 0 { return Double(tokens - 1) / decoding }
    }
    let seconds = total.seconds
    guard tokens > 0, seconds > 0 else { return nil }
    return Double(tokens) / seconds
  }
}

extension Duration {
  /// The duration in seconds, as a floating-point number.
  public var seconds: Double {
    let (seconds, attoseconds) = components
    return Double(seconds) + Double(attoseconds) / 1e18
  }

  /// The duration in milliseconds, rounded to a tenth.
  var milliseconds: Double { (seconds * 10_000).rounded() / 10 }
}
