/// A JPEG's frame header (SOF0, SOF1 or SOF2), read by ``JPEGStructure``
/// with the rules of the decoder that will read it (stb_image): 8-bit
/// samples, one, three or four components, sampling factors 1...4 that
/// divide the largest one, the height in the header.
struct JPEGFrame {
  /// One component: its identifier (what a scan names it by).
  struct Component {
    let id: Int
  }

  let width: Int
  let height: Int
  /// SOF2: the scans refine coefficients (the decoder's progressive path).
  let progressive: Bool
  /// At most four (bounded by the header check).
  let components: [Component]

  /// Reads the header whose length field is at `offset` (the segment's
  /// length, `length`, is already known to lie within the file).
  init(_ bytes: ImageBytes, at offset: Int, length: Int, progressive: Bool) throws(ImageDefect) {
    guard length >= 11 else { throw .corrupt("a frame header (SOF) of \(length) bytes") }
    let precision = try bytes.uint8(at: offset + 2)
    guard precision == 8 else {
      throw .unsupported("\(precision)-bit samples; the decoder reads 8-bit JPEG only")
    }
    height = try bytes.uint16BE(at: offset + 3)
    width = try bytes.uint16BE(at: offset + 5)
    guard height > 0 else { throw .unsupported("its height is left to a later DNL marker") }
    guard width > 0 else { throw .corrupt("a width of 0") }
    let count = try bytes.uint8(at: offset + 7)
    guard count == 1 || count == 3 || count == 4 else {
      throw count == 0
        ? .corrupt("a frame of no components") : .unsupported("\(count) components; the decoder reads 1, 3 or 4")
    }
    guard length == 8 + 3 * count else { throw .corrupt("a frame header of \(length) bytes for \(count) components") }
    var components: [Component] = []
    var factors: [(horizontal: Int, vertical: Int)] = []
    for index in 0..<count {
      let field = offset + 8 + 3 * index
      let sampling = try bytes.uint8(at: field + 1)
      let (horizontal, vertical) = (sampling >> 4, sampling & 15)
      guard (1...4).contains(horizontal), (1...4).contains(vertical) else {
        throw .corrupt("sampling factors \(horizontal)×\(vertical) (1 to 4 allowed)")
      }
      guard try bytes.uint8(at: field + 2) <= 3 else { throw .corrupt("a quantisation table number over 3") }
      components.append(Component(id: try bytes.uint8(at: field)))
      factors.append((horizontal, vertical))
    }
    let largest = factors.reduce((horizontal: 1, vertical: 1)) {
      (max($0.horizontal, $1.horizontal), max($0.vertical, $1.vertical))
    }
    guard factors.allSatisfy({ largest.horizontal % $0.horizontal == 0 && largest.vertical % $0.vertical == 0 })
    else { throw .unsupported("sampling factors that do not divide the largest one") }
    self.progressive = progressive
    self.components = components
  }
}
