// A channel with a cylinder: triangles around the cylinder (left square),
// quadrangles downstream (right rectangle, recombined). Physical groups:
// "wall" (the cylinder), "farfield" (the outer boundary), "fluid".
h = 0.25;
Point(1) = {0, 0, 0, h};
Point(2) = {2, 0, 0, h};
Point(3) = {4, 0, 0, h};
Point(4) = {4, 2, 0, h};
Point(5) = {2, 2, 0, h};
Point(6) = {0, 2, 0, h};
Point(7) = {1, 1, 0, h};
Point(8) = {1.5, 1, 0, h};
Point(9) = {1, 1.5, 0, h};
Point(10) = {0.5, 1, 0, h};
Point(11) = {1, 0.5, 0, h};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 5};
Line(5) = {5, 6};
Line(6) = {6, 1};
Line(7) = {2, 5};
Circle(8) = {8, 7, 9};
Circle(9) = {9, 7, 10};
Circle(10) = {10, 7, 11};
Circle(11) = {11, 7, 8};
Curve Loop(1) = {1, 7, 5, 6};
Curve Loop(2) = {8, 9, 10, 11};
Plane Surface(1) = {1, 2};
Curve Loop(3) = {2, 3, 4, -7};
Plane Surface(2) = {3};
Transfinite Curve{2, 4} = 9;
Transfinite Curve{3, 7} = 9;
Transfinite Surface{2};
Recombine Surface{2};
Physical Curve("wall") = {8, 9, 10, 11};
Physical Curve("farfield") = {1, 2, 3, 4, 5, 6};
Physical Surface("fluid") = {1, 2};
