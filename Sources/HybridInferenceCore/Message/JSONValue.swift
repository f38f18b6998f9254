/// Any JSON value, kept exactly as the server sent it.
///
/// Gemini carries free-form JSON in a few places (function-call arguments,
/// function responses, error details); this type round-trips them without loss
/// so that history sent back to the server is unchanged.
///
/// Numbers are `.number(Double)`, except integers beyond ±2^53, which a
/// `Double` cannot hold exactly: those are `.exactInteger`, so that a tool's
/// `Int64` or `UInt64` argument, or an identifier in a structured answer,
/// reaches the app unchanged instead of silently rounded. The extra case is
/// the smallest change that keeps every number exact: every other number is
/// a `.number(Double)`, and only a switch that lists every case without
/// `default` has one more case to handle.
public enum JSONValue: Sendable, Hashable, Codable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number: any fraction, and every integer within ±2^53.
  case number(Double)
  /// A string.
  case string(String)
  /// An array, in order.
  case array([JSONValue])
  /// An object; a dictionary keeps no member order (a schema written as text does).
  case object([String: JSONValue])
  /// An integer beyond ±2^53, as its exact digits. The library's JSON reader
  /// (structured answers, on-device and OpenAI-compatible tool calls) keeps
  /// integers of any length; through another `Decoder` (Gemini's responses,
  /// whose wire format holds doubles anyway) integers that fit in `Int64` or
  /// `UInt64` are kept exactly and longer ones arrive as the decoder's `Double`.
  case exactInteger(ExactInteger)

  /// Decodes any JSON value.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self), value.magnitude > ExactInteger.exactDoubleLimit {
      self = .exactInteger(ExactInteger(value))
    } else if let value = try? container.decode(UInt64.self), value > ExactInteger.exactDoubleLimit {
      self = .exactInteger(ExactInteger(value))
    } else if let value = try? container.decode(Double.self) {
      self = .number(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else if let value = try? container.decode([JSONValue].self) {
      self = .array(value)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  /// Encodes the value as it was received.
  ///
  /// In the library's request bodies the value is written as JSON text by
  /// the library's own writer (every integer exact, members in name order),
  /// after checking its depth without recursion.
  /// - Throws: `EncodingError.invalidValue` for an `.exactInteger` beyond
  ///   the 64-bit range, which another `Encoder` cannot write exactly (the
  ///   library's own JSON text, `Part.FunctionCall.argumentsJSON`, can); in a
  ///   request body, for a value nested deeper than `maximumDepth` or a
  ///   number that is not finite.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    if let splices = JSONSplices.of(encoder) {
      let problem: String? =
        switch jsonTextProblem {
        case .tooDeep: "a value nests deeper than \(Self.maximumDepth) levels"
        case .notFinite: "a value holds a number that is not finite"
        case nil: nil
        }
      if let problem {
        // The value in words, not itself: describing a deep value recurses.
        throw EncodingError.invalidValue(problem, .init(codingPath: encoder.codingPath, debugDescription: problem))
      }
      try container.encode(splices.placeholder(for: jsonText))
      return
    }
    switch self {
    case .null: try container.encodeNil()
    case .bool(let value): try container.encode(value)
    case .number(let value): try container.encode(value)
    case .string(let value): try container.encode(value)
    case .array(let value): try container.encode(value)
    case .object(let value): try container.encode(value)
    case .exactInteger(let value):
      if let exact = value.exactly(Int64.self) {
        try container.encode(exact)
      } else if let exact = value.exactly(UInt64.self) {
        try container.encode(exact)
      } else {
        throw EncodingError.invalidValue(
          self,
          .init(
            codingPath: encoder.codingPath,
            debugDescription: "the integer \(value) is beyond 64 bits: an Encoder cannot write it exactly"))
      }
    }
  }

  /// The member named `key` when this is an object.
  public subscript(key: String) -> JSONValue? {
    if case .object(let members) = self { return members[key] }
    return nil
  }

  /// The string when this is a string.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }
}

extension JSONValue {
  /// An integer kept as its decimal digits, so that no digit is lost.
  public struct ExactInteger: Sendable, Hashable, CustomStringConvertible {
    /// 2^53: integers up to this magnitude are exact as a `Double`.
    static let exactDoubleLimit: UInt64 = 1 << 53

    /// JSON's integer syntax: an optional `-`, then `0` or digits not starting with `0`.
    public let digits: String

    /// The integer written as `digits`; nil when that is not JSON's integer syntax.
    public init?(_ digits: String) {
      var rest = Substring(digits).utf8
      if rest.first == UInt8(ascii: "-") { rest = rest.dropFirst() }
      guard let first = rest.first, rest.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
        first != UInt8(ascii: "0") || rest.count == 1
      else { return nil }
      self.digits = digits
    }

    /// The integer `value`.
    public init(_ value: some BinaryInteger) {
      digits = String(value)
    }

    /// The digits.
    public var description: String { digits }

    /// The value as `type`; nil when it does not fit.
    public func exactly<T: FixedWidthInteger>(_ type: T.Type = T.self) -> T? {
      T(digits)
    }

    /// The nearest `Double` (rounded: use `exactly(_:)` to keep every digit).
    public var doubleValue: Double { Double(digits) ?? .nan }
  }
}

extension JSONValue {
  /// The most arrays and objects nested in one value that the library
  /// takes or reads: 512, as Foundation's `JSONDecoder` allows.
  ///
  /// Every walk over a value (JSON text, request bodies, chat templates,
  /// schema checks) recurses, so depth is bounded where a value comes in:
  /// JSON text is refused as it is read; a `JSONValue` the app builds (a
  /// transcript's tool arguments or outputs, a tool call from the app's own
  /// `LanguageModel`, a schema) is checked, without recursion, before
  /// anything walks it, and a deeper one is a typed error
  /// (`HybridInferenceError.invalidTranscript`, `.invalidToolCall`,
  /// `.unsupportedSchema`; `EncodingError` when a transcript is saved).
  public static let maximumDepth = 512

  /// Why the value cannot become JSON text the library's reader takes back.
  enum JSONTextProblem {
    /// Nested deeper than `maximumDepth`.
    case tooDeep
    /// A number is infinite or NaN.
    case notFinite
  }

  /// What keeps the value out of JSON text, or nil; nesting wins when both
  /// are found. One walk with a stack of its own, which stops at the first
  /// level past `maximumDepth`, so the check neither recurses nor walks a
  /// value twice before it is written.
  var jsonTextProblem: JSONTextProblem? {
    var notFinite = false
    var pending: [(value: JSONValue, depth: Int)] = [(self, 0)]
    while let (value, depth) = pending.popLast() {
      switch value {
      case .number(let number) where !number.isFinite: notFinite = true
      case .array(let items):
        guard depth < Self.maximumDepth else { return .tooDeep }
        pending.append(contentsOf: items.map { ($0, depth + 1) })
      case .object(let members):
        guard depth < Self.maximumDepth else { return .tooDeep }
        pending.append(contentsOf: members.values.map { ($0, depth + 1) })
      default: break
      }
    }
    return notFinite ? .notFinite : nil
  }

  /// Whether more than `limit` containers nest here; walked with a stack of
  /// its own, so any depth can be asked about.
  func nests(deeperThan limit: Int = JSONValue.maximumDepth) -> Bool {
    var pending: [(value: JSONValue, depth: Int)] = [(self, 0)]
    while let (value, depth) = pending.popLast() {
      switch value {
      case .array(let items):
        guard depth < limit else { return true }
        pending.append(contentsOf: items.map { ($0, depth + 1) })
      case .object(let members):
        guard depth < limit else { return true }
        pending.append(contentsOf: members.values.map { ($0, depth + 1) })
      default: break
      }
    }
    return false
  }
}
