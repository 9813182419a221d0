// sample.cpp: classes, namespaces, out-of-class definitions.
#include <string>

namespace shapes {

class Circle {
 public:
  explicit Circle(double r) : r_(r) {}
  double area() const;
  double radius() const { return r_; }

 private:
  double r_;
};

double Circle::area() const {
  return 3.14159 * r_ * r_;
}

template <typename T>
struct Box {
  T value;
  T get() const { return value; }
};

}  // namespace shapes

int main() {
  shapes::Circle c(1.0);
  return static_cast<int>(c.area());
}
