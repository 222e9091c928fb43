// An O-grid of quadrangles around a cylinder, for Airfoil: the cylinder's
// boundary in the physical group "wall", the outer circle in "farfield".
r = 0.5; R = 8;
Point(1) = {0, 0, 0};
For k In {0:3}
  Point(2 + k) = {r * Cos(k * Pi / 2), r * Sin(k * Pi / 2), 0};
  Point(6 + k) = {R * Cos(k * Pi / 2), R * Sin(k * Pi / 2), 0};
EndFor
For k In {0:3}
  Circle(1 + k) = {2 + k, 1, 2 + (k + 1) % 4};
  Circle(5 + k) = {6 + k, 1, 6 + (k + 1) % 4};
  Line(9 + k) = {2 + k, 6 + k};
EndFor
For k In {0:3}
  Curve Loop(1 + k) = {9 + k, 5 + k, -(9 + (k + 1) % 4), -(1 + k)};
  Plane Surface(1 + k) = {1 + k};
EndFor
Transfinite Curve{1:8} = 17;
Transfinite Curve{9:12} = 13 Using Progression 1.25;
Transfinite Surface{1:4};
Recombine Surface{1:4};
Physical Curve("wall") = {1:4};
Physical Curve("farfield") = {5:8};
Physical Surface("fluid") = {1:4};
