fn main() {
    println!("{}", herd::global().info().render(true));
}
