/// A Gemini enum value that decodes whatever string the server sends.
///
/// The REST API adds enum values over time. Decoding them into a closed Swift
/// enum would turn a harmless new value into a decoding failure, so each enum is
/// a struct over its raw string with the known values as static constants.
public protocol ProtoEnum: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible
where RawValue == String {
  /// The value the server sent, known to this library or not.
  init(rawValue: String)
}

extension ProtoEnum {
  /// Decodes any string, known or not.
  public init(from decoder: any Decoder) throws {
    self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
  }

  /// Encodes the raw string.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }

  /// The wire name.
  public var description: String { rawValue }
}
