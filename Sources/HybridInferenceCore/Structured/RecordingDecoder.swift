/// The decoder `SchemaRecorder` runs a type's `init(from:)` against: every
/// read is recorded in a `RecordingNode` and answered with a placeholder.
struct RecordingDecoder: Decoder {
  let recorder: SchemaRecorder
  let node: RecordingNode
  let path: [String]

  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    try claim(.object(members: [], required: []))
    return KeyedDecodingContainer(RecordingKeyedContainer<Key>(decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try claim(.array(items: nil))
    return RecordingUnkeyedContainer(decoder: self)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    RecordingSingleValueContainer(decoder: self)
  }

  /// A value is one kind of container; asking for a second kind is a
  /// branching decoder, which no single schema describes.
  private func claim(_ kind: RecordingNode.Kind) throws {
    guard node.kind == nil else {
      throw recorder.failure(path, "init(from:) asks for more than one container (it branches)")
    }
    node.kind = kind
  }

  /// Records the schema of a value of `type` read at `component`.
  func read<Value: Decodable>(_ type: Value.Type, at component: String) throws -> (OrderedJSON, Value) {
    try recorder.record(type, path: path + [component])
  }
}

struct RecordingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: RecordingDecoder
  var codingPath: [any CodingKey] { [] }

  var allKeys: [Key] {
    decoder.node.fail(
      decoder.recorder.failure(decoder.path, "init(from:) lists the keys present (it branches on data)"))
    return []
  }

  func contains(_ key: Key) -> Bool {
    decoder.node.probed.insert(key.stringValue)
    return true
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    decoder.node.probed.insert(key.stringValue)
    return false
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    let name = key.stringValue
    guard case .object(var members, var required) = decoder.node.kind else {
      throw decoder.recorder.failure(decoder.path, "unexpected container")
    }
    guard !members.contains(where: { $0.0 == name }) else {
      throw decoder.recorder.failure(decoder.path + [name], "init(from:) reads this key twice (it branches)")
    }
    let (schema, value) = try decoder.read(type, at: name)
    members.append((name, schema))
    if !decoder.node.probed.contains(name) { required.append(name) }
    decoder.node.kind = .object(members: members, required: required)
    return value
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type as Bool.Type, key) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type, key) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type, key) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type, key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type, key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type, key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type, key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type, key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type, key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type, key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type, key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type, key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type, key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type, key) }

  private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
    try decode(type, forKey: key)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    throw decoder.recorder.failure(decoder.path + [key.stringValue], "nested containers are not derived")
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    throw decoder.recorder.failure(decoder.path + [key.stringValue], "nested containers are not derived")
  }

  func superDecoder() throws -> any Decoder {
    throw decoder.recorder.failure(decoder.path, "superDecoder (class inheritance) is not derived")
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    throw decoder.recorder.failure(decoder.path + [key.stringValue], "superDecoder is not derived")
  }
}

/// Hands out one element, so `Array.init(from:)` records its element type once.
struct RecordingUnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: RecordingDecoder
  var codingPath: [any CodingKey] { [] }
  var count: Int? { nil }
  private(set) var currentIndex = 0
  var isAtEnd: Bool { currentIndex > 0 }

  init(decoder: RecordingDecoder) {
    self.decoder = decoder
  }

  mutating func decodeNil() throws -> Bool { false }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    guard currentIndex == 0 else {
      throw decoder.recorder.failure(decoder.path, "init(from:) reads array elements of different types")
    }
    let (schema, value) = try decoder.read(type, at: "[]")
    decoder.node.kind = .array(items: schema)
    currentIndex += 1
    return value
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
  mutating func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
  mutating func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }

  private mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T { try decode(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    throw decoder.recorder.failure(decoder.path, "nested containers are not derived")
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    throw decoder.recorder.failure(decoder.path, "nested containers are not derived")
  }

  mutating func superDecoder() throws -> any Decoder {
    throw decoder.recorder.failure(decoder.path, "superDecoder is not derived")
  }
}

/// A value read whole: its schema is the schema of the type it is read as.
struct RecordingSingleValueContainer: SingleValueDecodingContainer {
  let decoder: RecordingDecoder
  var codingPath: [any CodingKey] { [] }

  func decodeNil() -> Bool { false }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    guard decoder.node.kind == nil else {
      throw decoder.recorder.failure(decoder.path, "init(from:) reads more than one value (it branches)")
    }
    let (schema, value) = try decoder.recorder.record(type, path: decoder.path)
    decoder.node.kind = .single(schema)
    return value
  }

  func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
  func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
  func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
  func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
  func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }

  private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T { try decode(type) }
}
