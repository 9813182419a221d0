export interface Shape {
  area(): number;
  readonly name: string;
}

@Component({
  selector: "app-circle",
})
export class Circle implements Shape {
  readonly name = "circle";

  constructor(private r: number) {}

  @Memoize()
  area(): number {
    return Math.PI * this.r ** 2;
  }
}

export type Id = string | number;

export function over(a: string): string;
export function over(a: number): number;
export function over(a: any): any {
  return a;
}
