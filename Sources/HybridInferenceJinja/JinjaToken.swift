/// One token of a template: literal text, a tag delimiter, or a piece of an
/// expression inside a tag.
struct JinjaToken: Equatable, Sendable {
  enum Kind: Equatable, Sendable {
    case text(String)
    case blockBegin, blockEnd, variableBegin, variableEnd
    case name(String)
    case string(String)
    case integer(Int)
    case float(Double)
    case symbol(String)
    case end
  }

  var kind: Kind
  var line: Int
}
